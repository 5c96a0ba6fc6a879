// The registry of outbound event types: for each, what it means, which part of the product emits
// it, the schema of its `data` and an example of one. Names are lowercase, dot-separated,
// `resource.sub_resource.action`. Adding an event is adding an entry here; wildcard webhook
// subscriptions receive it without change. The event catalog is published from exactly this.
import { Type, type Static, type TObject } from '@sinclair/typebox';

export interface EventDefinition<Data extends TObject = TObject> {
  /** The part of the product that emits it (the catalog groups events by it). */
  group: string;
  description: string;
  /** The schema of the event's `data`: stable identifiers and UTC timestamps only. */
  data: Data;
  example: Static<Data>;
  /** Still emitted, but going away: receivers should stop relying on it. */
  deprecated: boolean;
}

/** Keeps each entry's own `data` type (a plain annotation would widen it to TObject). */
const define = <Data extends TObject>(definition: EventDefinition<Data>) => definition;

const UserId = Type.Integer({ description: 'The user id' });
const Email = Type.String({ format: 'email' });
const DateTime = Type.String({ format: 'date-time' });

export const EVENT_TYPES = {
  'team.member.added': define({
    group: 'teams',
    description: 'A user joined a team (invitation accepted or direct add)',
    data: Type.Object({
      user_id: UserId,
      email: Email,
      role: Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member')]),
    }),
    example: { user_id: 42, email: 'ada@example.com', role: 'member' },
    deprecated: false,
  }),
  'team.invitation.created': define({
    group: 'teams',
    description: 'A team invitation was sent',
    data: Type.Object({
      invitation_id: Type.String({ format: 'uuid' }),
      email: Email,
      role: Type.Union([Type.Literal('admin'), Type.Literal('member')]),
      invited_by: UserId,
      expires_at: DateTime,
    }),
    example: {
      invitation_id: '5f0c6f1e-2b7d-4c8e-9a31-0d4e8b7c6a52',
      email: 'grace@example.com',
      role: 'member',
      invited_by: 42,
      expires_at: '2026-11-29T05:00:00.000Z',
    },
    deprecated: false,
  }),
  'user.profile.updated': define({
    group: 'accounts',
    description: 'A team member changed their profile (one event per active team of the user)',
    data: Type.Object({
      user_id: UserId,
      changed_fields: Type.Array(
        Type.Union([Type.Literal('first_name'), Type.Literal('last_name'), Type.Literal('display_name')]),
      ),
      updated_at: DateTime,
    }),
    example: { user_id: 42, changed_fields: ['display_name'], updated_at: '2026-11-22T05:00:00.000Z' },
    deprecated: false,
  }),
};

export type EventType = keyof typeof EVENT_TYPES;

/** The `data` of an event of type T. */
export type EventData<T extends EventType> = Static<(typeof EVENT_TYPES)[T]['data']>;

export const EVENT_NAMES = Object.keys(EVENT_TYPES) as EventType[];

export function isEventType(name: string): name is EventType {
  return Object.hasOwn(EVENT_TYPES, name);
}
