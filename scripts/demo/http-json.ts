/** A tiny JSON-over-HTTP client on node:http with a keep-alive pool (no extra dependency). */
import { Agent, request } from 'node:http';

export interface JsonResponse {
  status: number;
  body: any;
}

export class HttpJson {
  private readonly agent: Agent;

  /** `maxSockets` per instance: how many requests are really in flight at once. */
  constructor(maxSockets = 400) {
    this.agent = new Agent({ keepAlive: true, maxSockets });
  }

  send(method: string, url: string, body?: unknown, timeoutMs = 120_000): Promise<JsonResponse> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = request(
        url,
        {
          method,
          agent: this.agent,
          timeout: timeoutMs,
          headers: payload
            ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
            : {},
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: parse(text) }));
          res.on('error', reject);
        },
      );
      req.on('timeout', () =>
        req.destroy(new Error(`${method} ${url}: no answer in ${timeoutMs} ms`)),
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  get(url: string): Promise<JsonResponse> {
    return this.send('GET', url);
  }

  post(url: string, body: unknown): Promise<JsonResponse> {
    return this.send('POST', url, body);
  }

  put(url: string, body: unknown): Promise<JsonResponse> {
    return this.send('PUT', url, body);
  }

  close(): void {
    this.agent.destroy();
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Throws unless the response has the expected status, with the body in the message. */
export function expectStatus(response: JsonResponse, status: number, what: string): any {
  if (response.status !== status) {
    throw new Error(
      `${what}: expected HTTP ${status}, got ${response.status} ${JSON.stringify(response.body)}`,
    );
  }
  return response.body;
}
