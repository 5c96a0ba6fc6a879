// A non-2xx answer of the API as an exception: the RFC 9457 problem details the service answers with
// (docs/api.md, "Errors"), and the request id to quote in a support request.

export interface FieldError {
  field: string;
  message: string;
}

export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  /** The problem type URI (`about:blank` when the answer was not a problem document). */
  readonly type: string;
  readonly title: string;
  readonly detail: string;
  /** Validation failures, one per field; empty otherwise. */
  readonly errors: FieldError[];
  /** X-Request-ID of the answer (or the problem's `request_id`). */
  readonly requestId: string | null;
  /** The answer, its body already read. */
  readonly response: Response;
  /** The body as parsed JSON, or its text when it was not JSON. */
  readonly body: unknown;

  constructor(response: Response, body: unknown) {
    const problem = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
    const text = (value: unknown) => (typeof value === 'string' && value.length > 0 ? value : undefined);
    const title = text(problem.title) ?? text(problem.error) ?? (response.statusText || `HTTP ${response.status}`);
    const detail =
      text(problem.detail) ?? text(problem.error_description) ?? (typeof body === 'string' ? body.slice(0, 200) : '');
    super(detail ? `${title}: ${detail}` : title);
    this.status = response.status;
    this.type = text(problem.type) ?? 'about:blank';
    this.title = title;
    this.detail = detail;
    this.errors = Array.isArray(problem.errors)
      ? problem.errors.filter(
          (e): e is FieldError =>
            !!e && typeof e === 'object' && typeof e.field === 'string' && typeof e.message === 'string',
        )
      : [];
    this.requestId = response.headers.get('x-request-id') ?? text(problem.request_id) ?? null;
    this.response = response;
    this.body = body;
  }

  /** Reads the body of a non-2xx answer (JSON when it parses, else text) into an ApiError. */
  static async from(response: Response): Promise<ApiError> {
    let body: unknown = null;
    try {
      const raw = await response.text();
      try {
        body = raw ? JSON.parse(raw) : null;
      } catch {
        body = raw;
      }
    } catch {
      // The connection broke while reading: the status is all there is.
    }
    return new ApiError(response, body);
  }
}
