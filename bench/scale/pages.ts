// The deep pages the scale scenario reads: the member list's page 200 (the last page of the
// 10,000-member team, 50 to a page) and the delivery log's 1,000th page by cursor.
export const DEEP_MEMBER_PAGE = 200;
export const DEEP_CURSOR_PAGE = 1_000;
