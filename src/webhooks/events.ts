// The registry of outbound event names (docs/webhooks.md, "Events"): lowercase, dot-separated,
// `resource.sub_resource.action`. Adding an event is adding a line here; wildcard subscriptions
// receive it automatically.
export const EVENT_TYPES = {
  'team.member.added': 'A user joined a team (invitation accepted or direct add)',
  'team.invitation.created': 'A team invitation was sent',
  'user.profile.updated': 'A team member changed their profile',
} as const;

export type EventType = keyof typeof EVENT_TYPES;

export const EVENT_NAMES = Object.keys(EVENT_TYPES) as EventType[];

export const API_VERSION = 'v1';

export function isEventType(name: string): name is EventType {
  return Object.hasOwn(EVENT_TYPES, name);
}
