// The service's API as TypeScript types, generated from its OpenAPI document (/api/schema/) by
// openapi-typescript through `npm run generate:client`. Do not edit: CI regenerates it from the
// running service and fails when it differs from this file (.ci/run).
export interface paths {
    "/api/v1/me/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The authenticated user's profile */
        get: operations["get_me"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /**
         * Update the authenticated user's names
         * @description Only the fields sent change. A real change emits `user.profile.updated` to every active team of the user; a request that changes nothing emits nothing. `id` and `email` are read-only (400).
         */
        patch: operations["update_me"];
        trace?: never;
    };
    "/api/v1/teams/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Teams the caller belongs to (active teams only), ordered by name */
        get: operations["list_teams"];
        put?: never;
        /** Create a team; the caller becomes its owner */
        post: operations["create_team"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/teams/{id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One team the caller belongs to */
        get: operations["get_team"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** Rename a team or change its slug (owner or admin) */
        patch: operations["update_team"];
        trace?: never;
    };
    "/api/v1/teams/{id}/members/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Members of a team the caller belongs to: by page number in joining order (pages 1 to 200), or with page_size/cursor newest joiner first */
        get: operations["list_members"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/teams/{id}/members/{user_id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Remove a member (owners: anyone; admins: members; anyone: themself). 204 on success */
        delete: operations["remove_member"];
        options?: never;
        head?: never;
        /** Change a member's role (owners: anyone; admins: members only, and only to member) */
        patch: operations["set_member_role"];
        trace?: never;
    };
    "/api/v1/teams/{team_id}/invitations/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The team's open invitations (pending or expired), newest first (owner or admin) */
        get: operations["list_invitations"];
        put?: never;
        /**
         * Invite an e-mail address to the team (owners: admin or member; admins: member). Sends the e-mail
         * @description Replaces a pending invitation for the same address (its link stops working). Supports the `Idempotency-Key` header: a retry with the same key and body replays the first answer.
         */
        post: operations["create_invitation"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/teams/{team_id}/invitations/{id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Revoke a pending invitation; its link stops working (owner or admin). 204 on success */
        delete: operations["revoke_invitation"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/invitations/accept/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Accept an invitation with the token from its link; the caller's verified e-mail must be the invited address */
        post: operations["accept_invitation"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/teams/{team_id}/audit-log/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The team's audit log, newest first, cursor-paginated (owner or admin)
         * @description Every change to the team, recorded in the same transaction as the change. Filters: `action`, `actor_id`, `since` (inclusive) and `until` (exclusive); a value that is not what the filter takes is 400.
         */
        get: operations["list_audit_entries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/products/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Demo products, ordered by id */
        get: operations["list_products"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/teams/{team_id}/webhooks/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The team's subscriptions, oldest first */
        get: operations["list_webhooks"];
        put?: never;
        /** Create a subscription; the response carries the signing secret, shown only here */
        post: operations["create_webhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/teams/{team_id}/webhooks/{id}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One subscription */
        get: operations["get_webhook"];
        put?: never;
        post?: never;
        /** Delete a subscription; its pending deliveries stop */
        delete: operations["delete_webhook"];
        options?: never;
        head?: never;
        /** Change url, events or is_active (re-enabling resets the failure count) */
        patch: operations["update_webhook"];
        trace?: never;
    };
    "/api/v1/teams/{team_id}/webhooks/{id}/rotate-secret/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** New signing secret (shown once); the old one keeps signing during the overlap window */
        post: operations["rotate_webhook_secret"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/teams/{team_id}/webhooks/{id}/logs/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Delivery log, newest attempt first, cursor-paginated (page_size 50 by default, at most 200) */
        get: operations["list_webhook_deliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/teams/{team_id}/webhooks/{id}/logs/{log_id}/retry/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Retry a dead letter: a fresh cycle from attempt 1 (202 with the queued entry) */
        post: operations["retry_webhook_delivery"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/teams/{team_id}/webhooks/{id}/test/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Queue a real, signed, logged delivery of a test event (data.test is true) to this subscription only */
        post: operations["test_webhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/event-types/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Every event type webhooks deliver: its description, the JSON Schema of its data and an example event
         * @description No credential needed. The same catalog as an OpenAPI 3.1 document of webhooks: /api/schema/webhooks/.
         */
        get: operations["list_event_types"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/token/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Exchange e-mail and password (and TOTP code) for a JWT access token and a refresh token */
        post: operations["issue_jwt"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/token/refresh/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Spend a refresh token for a new pair (a reused refresh token revokes its family) */
        post: operations["refresh_jwt"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/token/revoke/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Revoke a refresh token and its family (204 also for an unknown token, as RFC 7009) */
        post: operations["revoke_jwt"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/admin/suppressions/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Active suppressed addresses, newest first (staff only) */
        get: operations["list_suppressions"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/admin/suppressions/{email}/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Release a suppressed address so mail to it is sent again (staff only)
         * @description Optional JSON body `{"reason": "…"}`, recorded with the releasing user and the time.
         */
        delete: operations["release_suppression"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** @description RFC 9457 problem details */
        Problem: {
            type: string;
            title: string;
            status: number;
            detail: string;
            request_id: string;
            errors?: {
                field: string;
                message: string;
            }[];
        } & {
            [key: string]: unknown;
        };
        Profile: {
            id: number;
            /** Format: email */
            email: string;
            first_name: string;
            last_name: string;
            display_name: string;
        };
        Team: {
            /** Format: uuid */
            id: string;
            name: string;
            slug: string;
            /**
             * @description The caller's role in the team
             * @enum {string}
             */
            role: "owner" | "admin" | "member";
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            updated_at: string;
        };
        Member: {
            /** @description User id */
            id: number;
            email: string;
            first_name: string;
            last_name: string;
            display_name: string;
            /** @enum {string} */
            role: "owner" | "admin" | "member";
            /** Format: date-time */
            joined_at: string;
        };
        Invitation: {
            /** Format: uuid */
            id: string;
            email: string;
            /**
             * @description The owner role is never given by invitation.
             * @enum {string}
             */
            role: "admin" | "member";
            /** @enum {string} */
            status: "pending" | "expired" | "accepted" | "revoked" | "replaced";
            /** @description User id of the inviter (null once that user is deleted) */
            invited_by: number | null;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            expires_at: string;
        };
        AuditEntry: {
            id: number;
            /** Format: date-time */
            occurred_at: string;
            /** @description One of: team.created, team.updated, team.deactivated, team.reactivated, team.member.added, team.member.role_changed, team.member.removed, team.member.left, team.invitation.created, team.invitation.revoked, team.invitation.accepted, webhook.subscription.created, webhook.subscription.updated, webhook.subscription.deleted, webhook.subscription.disabled, webhook.secret_rotated, webhook.delivery.retried */
            action: string;
            actor: {
                type: "user" | "system";
                /** @description The user id */
                id: number | null;
                /** @description The e-mail address the user had then */
                email: string | null;
            };
            /** @description What proved the actor; null when the service acted on its own */
            credential: {
                type: "session" | "pat" | "oauth" | "jwt" | "cli";
                /** @description The credential's id (never the credential); for cli, the operating-system account */
                id: string | null;
            } | null;
            target: {
                type: string;
                id: string;
            };
            context: {
                ip: string | null;
                user_agent: string | null;
                request_id: string | null;
            };
            /** @description Before/after of the changed fields; never a secret */
            data: {
                [key: string]: unknown;
            };
        };
        WebhookSubscription: {
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            team_id: string;
            url: string;
            events: string[];
            is_active: boolean;
            /** @description Deliveries also carry the Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature) */
            standard_webhooks: boolean;
            /**
             * Format: date-time
             * @description When it was disabled automatically; null once re-enabled
             */
            disabled_at: string | null;
            disabled_reason: string | null;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            updated_at: string;
        };
        WebhookSubscriptionWithSecret: {
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            team_id: string;
            url: string;
            events: string[];
            is_active: boolean;
            /** @description Deliveries also carry the Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature) */
            standard_webhooks: boolean;
            /**
             * Format: date-time
             * @description When it was disabled automatically; null once re-enabled
             */
            disabled_at: string | null;
            disabled_reason: string | null;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            updated_at: string;
            /** @description Signing secret; shown only in this response */
            secret: string;
        };
        WebhookDeliveryLogEntry: {
            id: number;
            /** Format: uuid */
            subscription: string;
            event_id: string;
            event_type: string;
            /** @description The envelope exactly as sent */
            payload: {
                [key: string]: unknown;
            };
            attempt: number;
            /** Format: date-time */
            next_retry_at: string | null;
            status_code: number | null;
            response_body: string | null;
            duration_ms: number | null;
            /** Format: date-time */
            created_at: string;
            status: "pending" | "success" | "failed" | "dead_letter";
        };
        EventType: {
            /** @description The event type, as in subscriptions' `events` and the envelope's `type` */
            name: string;
            description: string;
            /** @description The part of the product that emits it */
            group: string;
            /** @description The JSON Schema (2020-12) of the event's `data` */
            schema: {
                [key: string]: unknown;
            };
            /** @description A whole event of this type, as a webhook receiver gets it */
            example: {
                id: string;
                type: string;
                /** @description Always "v1" */
                api_version: string;
                /** Format: date-time */
                created_at: string;
                /** Format: uuid */
                team_id: string;
                /** @description Valid against `schema` */
                data: {
                    [key: string]: unknown;
                };
            };
            /** @description Still sent, but going away: stop relying on it */
            deprecated: boolean;
        };
        Suppression: {
            email: string;
            reason: "bounce" | "complaint";
            /** @description The provider event that caused it */
            event_key: string | null;
            /**
             * Format: date-time
             * @description When the bounce or complaint happened
             */
            occurred_at: string;
            /** Format: date-time */
            created_at: string;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    get_me: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Profile"];
                };
            };
            /** @description Missing, malformed, expired or revoked credential */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The credential lacks the required scope or role */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Throttled */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    update_me: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description Given name; trimmed; no links or control characters */
                    first_name?: string;
                    /** @description Family name; trimmed; no links or control characters */
                    last_name?: string;
                    /** @description Name shown to others; trimmed; no links or control characters */
                    display_name?: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Profile"];
                };
            };
            /** @description Unknown or read-only field, too long, or a link in a name */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, expired or revoked credential */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The credential lacks the required scope or role */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Throttled */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    list_teams: {
        parameters: {
            query?: {
                /** @description Page number, from 1 */
                page?: string | string[];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description Total number of items over all pages */
                        count: number;
                        /** Format: uri */
                        next: string | null;
                        /** Format: uri */
                        previous: string | null;
                        results: {
                            /** Format: uuid */
                            id: string;
                            name: string;
                            slug: string;
                            /** @enum {string} */
                            role: "owner" | "admin" | "member";
                        }[];
                    };
                };
            };
            /** @description Missing, malformed, expired or revoked credential */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The credential lacks the required scope or role */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Invalid page */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Throttled */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    create_team: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name: string;
                    /** @description 1 to 50 lowercase letters, digits and inner hyphens; unique across teams; derived from the name when omitted */
                    slug?: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Team"];
                };
            };
            /** @description Invalid body: see `errors` */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, expired or revoked credential */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The credential lacks the required scope or role */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The slug is taken */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Throttled */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    get_team: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Team UUID */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Team"];
                };
            };
            /** @description Missing, malformed, expired or revoked credential */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The credential lacks the required scope or role */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Unknown team, or the caller is not a member */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Throttled */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    update_team: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Team UUID */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name?: string;
                    /** @description 1 to 50 lowercase letters, digits and inner hyphens; unique across teams */
                    slug?: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Team"];
                };
            };
            /** @description Invalid body: see `errors` */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, expired or revoked credential */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The credential lacks the required scope or role */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Unknown team, or the caller is not a member */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The slug is taken */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Throttled */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    list_members: {
        parameters: {
            query?: {
                /** @description Page number, from 1 */
                page?: string | string[];
                /** @description Opaque cursor from a previous page's next or previous link */
                cursor?: string;
                /** @description Items per page: default 50, at most 200 (larger values are clamped) */
                page_size?: string;
            };
            header?: never;
            path: {
                /** @description Team UUID */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description Total number of items over all pages */
                        count: number;
                        /** Format: uri */
                        next: string | null;
                        /** Format: uri */
                        previous: string | null;
                        results: components["schemas"]["Member"][];
                    } | {
                        /**
                         * Format: uri
                         * @description URL of the next (older) page
                         */
                        next: string | null;
                        /**
                         * Format: uri
                         * @description URL of the previous (newer) page
                         */
                        previous: string | null;
                        results: components["schemas"]["Member"][];
                    };
                };
            };
            /** @description A page past 200 (use the cursor), page with page_size or cursor, an invalid cursor or page_size */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, expired or revoked credential */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The credential lacks the required scope or role */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Unknown team, or the caller is not a member */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Throttled */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    remove_member: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Team UUID */
                id: string;
                /** @description User id */
                user_id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Removed */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Invalid body: see `errors` */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, expired or revoked credential */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The credential lacks the required scope or role */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Unknown team, the caller is not a member, or the user is not a member */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The change would leave the team without an owner */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Throttled */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    set_member_role: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Team UUID */
                id: string;
                /** @description User id */
                user_id: number;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @enum {string} */
                    role: "owner" | "admin" | "member";
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Member"];
                };
            };
            /** @description Invalid body: see `errors` */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, expired or revoked credential */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The credential lacks the required scope or role */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Unknown team, the caller is not a member, or the user is not a member */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The change would leave the team without an owner */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Throttled */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    list_invitations: {
        parameters: {
            query?: {
                /** @description Page number, from 1 */
                page?: string | string[];
            };
            header?: never;
            path: {
                /** @description Team UUID */
                team_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description Total number of items over all pages */
                        count: number;
                        /** Format: uri */
                        next: string | null;
                        /** Format: uri */
                        previous: string | null;
                        results: components["schemas"]["Invitation"][];
                    };
                };
            };
            /** @description Missing, malformed, expired or revoked credential */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The credential lacks the required scope or role */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Unknown team, or the caller is not a member */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Throttled */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    create_invitation: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retry safe: 1 to 128 letters, digits, "-" or "_". The same key and body replay the first answer (Idempotency-Replay: true); another body, or a retry while the first still runs, is 409. */
                "idempotency-key"?: string;
            };
            path: {
                /** @description Team UUID */
                team_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description Normalised: trimmed and lower-cased */
                    email: string;
                    /**
                     * @description The owner role is never given by invitation.
                     * @enum {string}
                     */
                    role: "admin" | "member";
                    /** @description Shown in the e-mail; plain text without links */
                    message?: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Invitation"];
                };
            };
            /** @description Invalid body: see `errors` */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, expired or revoked credential */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The credential lacks the required scope or role */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Unknown team, or the caller is not a member */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The address already belongs to a member (or the Idempotency-Key was reused with another body) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Throttled */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    revoke_invitation: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Team UUID */
                team_id: string;
                /** @description Invitation UUID */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Revoked */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Missing, malformed, expired or revoked credential */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The credential lacks the required scope or role */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Unknown team or invitation, or the invitation is no longer pending */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Throttled */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    accept_invitation: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description The token from the accept link /invitations/<token>/ */
                    token: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Team"];
                };
            };
            /** @description Invalid body: see `errors` */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, expired or revoked credential */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The invitation is for another address, or the e-mail is not verified (or the scope is missing) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The token is not valid */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The caller is already a member */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The invitation was used, revoked, replaced, or has expired */
            410: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Throttled */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    list_audit_entries: {
        parameters: {
            query?: {
                /** @description Opaque cursor from a previous page's next or previous link */
                cursor?: string;
                /** @description Items per page: default 50, at most 200 (larger values are clamped) */
                page_size?: string;
                /** @description Only this action */
                action?: string;
                /** @description Only changes made by this user id */
                actor_id?: string;
                /** @description ISO 8601 date or date-time with a zone: entries at or after it */
                since?: string;
                /** @description ISO 8601 date or date-time with a zone: entries before it */
                until?: string;
            };
            header?: never;
            path: {
                /** @description Team UUID */
                team_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /**
                         * Format: uri
                         * @description URL of the next (older) page
                         */
                        next: string | null;
                        /**
                         * Format: uri
                         * @description URL of the previous (newer) page
                         */
                        previous: string | null;
                        results: components["schemas"]["AuditEntry"][];
                    };
                };
            };
            /** @description A filter, the cursor or page_size is invalid */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, expired or revoked credential */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The credential lacks the required scope or role */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Unknown team, or the caller is not a member */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Throttled */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    list_products: {
        parameters: {
            query?: {
                /** @description Page number, from 1 */
                page?: string | string[];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description Total number of items over all pages */
                        count: number;
                        /** Format: uri */
                        next: string | null;
                        /** Format: uri */
                        previous: string | null;
                        results: {
                            id: number;
                            name: string;
                            sku: string;
                            /** @description Decimal amount as a string, e.g. "49.00" (no float rounding) */
                            price: string;
                            /** Format: date-time */
                            created_at: string;
                        }[];
                    };
                };
            };
            /** @description Missing, malformed, expired or revoked credential */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The credential lacks the required scope or role */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Invalid page */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Throttled */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    list_webhooks: {
        parameters: {
            query?: {
                /** @description Page number, from 1 */
                page?: string | string[];
            };
            header?: never;
            path: {
                /** @description Team UUID */
                team_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description Total number of items over all pages */
                        count: number;
                        /** Format: uri */
                        next: string | null;
                        /** Format: uri */
                        previous: string | null;
                        results: components["schemas"]["WebhookSubscription"][];
                    };
                };
            };
            /** @description Missing, malformed, expired or revoked credential */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The credential lacks the required scope or role */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Unknown team or subscription, or not a member */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Throttled */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    create_webhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Team UUID */
                team_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description Absolute https:// URL; must reach the public Internet */
                    url: string;
                    /** @description Event names, or ["*"] for all */
                    events: string[];
                    /** @description Also send the Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature); default true. The body is the same either way */
                    standard_webhooks?: boolean;
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookSubscriptionWithSecret"];
                };
            };
            /** @description RFC 9457 problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, expired or revoked credential */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The credential lacks the required scope or role */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Unknown team or subscription, or not a member */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Subscription cap reached */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Throttled */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    get_webhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                team_id: string;
                /** @description Subscription UUID */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookSubscription"];
                };
            };
            /** @description Missing, malformed, expired or revoked credential */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The credential lacks the required scope or role */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Unknown team or subscription, or not a member */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Throttled */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    delete_webhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                team_id: string;
                /** @description Subscription UUID */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Missing, malformed, expired or revoked credential */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The credential lacks the required scope or role */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Unknown team or subscription, or not a member */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Throttled */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    update_webhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                team_id: string;
                /** @description Subscription UUID */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description Absolute https:// URL; must reach the public Internet */
                    url?: string;
                    /** @description Event names, or ["*"] for all */
                    events?: string[];
                    is_active?: boolean;
                    /** @description Also send the Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature); default true. The body is the same either way */
                    standard_webhooks?: boolean;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookSubscription"];
                };
            };
            /** @description RFC 9457 problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, expired or revoked credential */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The credential lacks the required scope or role */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Unknown team or subscription, or not a member */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Throttled */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    rotate_webhook_secret: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                team_id: string;
                /** @description Subscription UUID */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookSubscriptionWithSecret"];
                };
            };
            /** @description Missing, malformed, expired or revoked credential */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The credential lacks the required scope or role */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Unknown team or subscription, or not a member */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Throttled */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    list_webhook_deliveries: {
        parameters: {
            query?: {
                /** @description Opaque cursor from a previous page's next or previous link */
                cursor?: string;
                /** @description Items per page: default 50, at most 200 (larger values are clamped) */
                page_size?: string;
                status?: "pending" | "success" | "failed" | "dead_letter";
                event_type?: string;
                event_id?: string;
            };
            header?: never;
            path: {
                team_id: string;
                /** @description Subscription UUID */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /**
                         * Format: uri
                         * @description URL of the next (older) page
                         */
                        next: string | null;
                        /**
                         * Format: uri
                         * @description URL of the previous (newer) page
                         */
                        previous: string | null;
                        results: components["schemas"]["WebhookDeliveryLogEntry"][];
                    };
                };
            };
            /** @description Missing, malformed, expired or revoked credential */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The credential lacks the required scope or role */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Unknown team or subscription, or not a member */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Throttled */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    retry_webhook_delivery: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                team_id: string;
                id: string;
                /** @description Log entry id */
                log_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookDeliveryLogEntry"];
                };
            };
            /** @description Missing, malformed, expired or revoked credential */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The credential lacks the required scope or role */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Unknown team or subscription, or not a member */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Not a dead letter, or already retried */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Throttled */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    test_webhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                team_id: string;
                /** @description Subscription UUID */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    event_type?: string;
                } | null;
            };
        };
        responses: {
            /** @description Default Response */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookDeliveryLogEntry"];
                };
            };
            /** @description RFC 9457 problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, expired or revoked credential */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The credential lacks the required scope or role */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Unknown team or subscription, or not a member */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Inactive subscription */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Throttled */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    list_event_types: {
        parameters: {
            query?: {
                /** @description Page number, from 1 */
                page?: string | string[];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description Total number of items over all pages */
                        count: number;
                        /** Format: uri */
                        next: string | null;
                        /** Format: uri */
                        previous: string | null;
                        results: components["schemas"]["EventType"][];
                    };
                };
            };
            /** @description Invalid page */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Throttled */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    issue_jwt: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    email: string;
                    password: string;
                    /** @description The current TOTP code; required when the user has TOTP (recovery codes are not accepted) */
                    mfa_code?: string;
                    /** @description Space-separated scopes to narrow the token to; default: all of the user's */
                    scope?: string;
                };
                "application/x-www-form-urlencoded": {
                    email: string;
                    password: string;
                    /** @description The current TOTP code; required when the user has TOTP (recovery codes are not accepted) */
                    mfa_code?: string;
                    /** @description Space-separated scopes to narrow the token to; default: all of the user's */
                    scope?: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description JWT access token (EdDSA), for Authorization: Bearer */
                        access: string;
                        /** @description Opaque refresh token (svcr_…), single use */
                        refresh: string;
                        /** @enum {string} */
                        token_type: "Bearer";
                        /** @description Seconds until the access token expires */
                        expires_in: number;
                        scope: string;
                    };
                };
            };
            /** @description RFC 9457 problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Refused (see detail) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Throttled */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    refresh_jwt: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    refresh: string;
                };
                "application/x-www-form-urlencoded": {
                    refresh: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description JWT access token (EdDSA), for Authorization: Bearer */
                        access: string;
                        /** @description Opaque refresh token (svcr_…), single use */
                        refresh: string;
                        /** @enum {string} */
                        token_type: "Bearer";
                        /** @description Seconds until the access token expires */
                        expires_in: number;
                        scope: string;
                    };
                };
            };
            /** @description RFC 9457 problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Refused (see detail) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Throttled */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    revoke_jwt: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    refresh: string;
                };
                "application/x-www-form-urlencoded": {
                    refresh: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description RFC 9457 problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Throttled */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    list_suppressions: {
        parameters: {
            query?: {
                /** @description Opaque cursor from a previous page's next or previous link */
                cursor?: string;
                /** @description Items per page: default 50, at most 200 (larger values are clamped) */
                page_size?: string;
                /** @description Only this address */
                email?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /**
                         * Format: uri
                         * @description URL of the next (older) page
                         */
                        next: string | null;
                        /**
                         * Format: uri
                         * @description URL of the previous (newer) page
                         */
                        previous: string | null;
                        results: components["schemas"]["Suppression"][];
                    };
                };
            };
            /** @description RFC 9457 problem details */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Missing, malformed, expired or revoked credential */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The credential lacks the required scope or role */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Throttled */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
    release_suppression: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The suppressed address */
                email: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Missing, malformed, expired or revoked credential */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The credential lacks the required scope or role */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description The address is not suppressed */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
            /** @description Throttled */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Problem"];
                };
            };
        };
    };
}
