// The intake's only outbound HTTP: GET with no redirects, a deadline and a size cap. Failures are sorted
// into refusals (the answer is 403: a redirect, a 4xx, an oversized or unusable answer, a bad TLS
// certificate) and transient failures (500, so SNS retries: timeout, connection error, 5xx).
// node:http(s) rather than fetch(): the agent is the seam tests use to reach a local stand-in for the
// AWS hosts (same host names, same TLS), and fetch() would follow redirects unless told otherwise.
import http from 'node:http';
import https from 'node:https';

export class FetchRefused extends Error {}
export class FetchTransient extends Error {}

export interface FetchAgents {
  https?: https.Agent;
  http?: http.Agent;
}

export interface FetchOptions {
  agents: FetchAgents;
  timeoutMs: number;
  maxBytes: number;
}

// OpenSSL's verification failures: the peer is not who it claims to be; retrying will not help.
const TLS_REFUSALS = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|ERR_TLS_CERT_ALTNAME_INVALID/;

export function boundedGet(url: string, options: FetchOptions): Promise<Buffer> {
  const target = new URL(url);
  const client = target.protocol === 'https:' ? https : http;
  const agent = target.protocol === 'https:' ? options.agents.https : options.agents.http;
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (error: Error | null, body?: Buffer) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      request.destroy();
      if (error) reject(error);
      else resolve(body!);
    };
    const request = client.get(
      target,
      { agent, headers: { accept: '*/*', 'user-agent': 'svc-mailprovider-intake' } },
      (response) => {
        const status = response.statusCode ?? 0;
        if (status >= 300 && status < 400)
          return finish(new FetchRefused(`${url} answered ${status} (redirects are not followed)`));
        if (status >= 500) return finish(new FetchTransient(`${url} answered ${status}`));
        if (status !== 200) return finish(new FetchRefused(`${url} answered ${status}`));
        const declared = Number(response.headers['content-length'] ?? 0);
        if (declared > options.maxBytes)
          return finish(new FetchRefused(`${url} is larger than ${options.maxBytes} bytes`));
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > options.maxBytes)
            return finish(new FetchRefused(`${url} is larger than ${options.maxBytes} bytes`));
          chunks.push(chunk);
        });
        response.on('end', () => finish(null, Buffer.concat(chunks)));
        response.on('error', (error) => finish(new FetchTransient(`${url}: ${error.message}`)));
      },
    );
    const deadline = setTimeout(
      () => finish(new FetchTransient(`${url} timed out after ${options.timeoutMs} ms`)),
      options.timeoutMs,
    );
    request.on('error', (error: NodeJS.ErrnoException) => {
      const code = error.code ?? '';
      finish(
        TLS_REFUSALS.test(code)
          ? new FetchRefused(`${url}: TLS ${code}`)
          : new FetchTransient(`${url}: ${code || error.message}`),
      );
    });
  });
}
