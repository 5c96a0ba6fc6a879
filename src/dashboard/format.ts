// How the dashboard pages write times and people: UTC to the minute (every stored time is an ISO
// 8601 UTC string), and a member's name as the profile gives it.
export function minuteUtc(iso: string | null | undefined, fallback = '—'): string {
  return iso ? `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` : fallback;
}

export function dayUtc(iso: string | null | undefined, fallback = '—'): string {
  return iso ? iso.slice(0, 10) : fallback;
}

/** The display name, else first and last name, else '' (the page then shows the e-mail alone). */
export function personName(user: { display_name: string; first_name: string; last_name: string }): string {
  return user.display_name || [user.first_name, user.last_name].filter(Boolean).join(' ');
}
