// Schemas shared by route definitions: they validate input, serialise output and feed the OpenAPI document.
import { Type, type TSchema } from '@sinclair/typebox';

export const Problem = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    request_id: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
  },
  { $id: 'Problem', additionalProperties: true, description: 'RFC 9457 problem details' },
);

export const ProblemRef = Type.Ref('Problem');

export function PageOf<T extends TSchema>(item: T) {
  return Type.Object({
    count: Type.Integer({ description: 'Total number of items over all pages' }),
    next: Type.Union([Type.String({ format: 'uri' }), Type.Null()]),
    previous: Type.Union([Type.String({ format: 'uri' }), Type.Null()]),
    results: Type.Array(item),
  });
}

// `page` is checked by pageRequest (http/pagination.ts), not here: anything but one positive integer,
// a repeated `page` included, is the same 404 "Invalid page." rather than a schema error.
export const PageQuery = Type.Object({
  page: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())], { description: 'Page number, from 1' })),
});

/** The error answers every authenticated operation can give. */
export const authErrors = {
  401: { ...ProblemRef, description: 'Missing, malformed, expired or revoked credential' },
  403: { ...ProblemRef, description: 'The credential lacks the required scope or role' },
  429: { ...ProblemRef, description: 'Throttled' },
};

export const DateTime = Type.String({ format: 'date-time' });
