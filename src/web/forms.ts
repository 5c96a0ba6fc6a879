// Reading urlencoded form bodies (@fastify/formbody): a field may be absent, a string, or an array
// when repeated. These helpers give a trimmed string (or list) and never throw.
import type { FastifyRequest } from 'fastify';

function bodyOf(request: FastifyRequest): Record<string, unknown> {
  const body = request.body;
  return body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
}

/** The field as a string ('' when absent), cut at `max` characters; `trim` false for passwords. */
export function formString(
  request: FastifyRequest,
  name: string,
  options: { max?: number; trim?: boolean } = {},
): string {
  const value = bodyOf(request)[name];
  const first = Array.isArray(value) ? value[0] : value;
  if (typeof first !== 'string') return '';
  const text = options.trim === false ? first : first.trim();
  return text.slice(0, options.max ?? 1000);
}

/** Every value of a repeated field (checkboxes). */
export function formList(request: FastifyRequest, name: string): string[] {
  const value = bodyOf(request)[name];
  const list = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return list.filter((item): item is string => typeof item === 'string').slice(0, 100);
}
