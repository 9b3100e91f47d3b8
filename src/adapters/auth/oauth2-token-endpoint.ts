/**
 * One OAuth2 client-credentials token request (RFC 6749 4.4): a form POST to the token endpoint, at its own origin
 * only (a client bound to that origin; a redirect is an answer, never followed), with the client authenticated by
 * HTTP Basic (2.3.1, the default) or in the body. The answer is read bounded and never recorded: a failure becomes
 * a {@link CredentialUnavailableError} naming the endpoint, the status and the registered error code only, because
 * the rest of an answer may carry the token or echo the client secret.
 */
import { Client } from 'undici';
import { z } from 'zod';
import { CredentialUnavailableError } from '../http';

/** What one token request needs; the secret is read by the caller just before. */
interface TokenRequest {
  readonly tokenUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly scopes: readonly string[];
  readonly audience: string | undefined;
  readonly clientAuthentication: 'basic' | 'body';
  /** Connect, headers and body timeouts of the request, ms. */
  readonly timeoutMs: number;
}

/** An access token as the endpoint gave it. */
export interface IssuedToken {
  readonly accessToken: string;
  /** Its lifetime from `expires_in`, ms; undefined when the endpoint gave none. */
  readonly lifetimeMs: number | undefined;
}

/** The most bytes of a token answer read: a token answer is small, and nothing is kept of a larger one. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** RFC 6750 b64token: the characters an access token may have in an `Authorization: Bearer` header. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

const tokenAnswerSchema = z.object({
  access_token: z.string().min(1).max(16_384).regex(B64TOKEN),
  token_type: z
    .string()
    .refine((type) => type.toLowerCase() === 'bearer')
    .optional(),
  expires_in: z.union([z.number().positive(), z.string().regex(/^\d+$/).transform(Number)]).optional(),
});

/** RFC 6749 5.2 error codes are these characters; anything else in `error` is not repeated. */
const ERROR_CODE = /^[a-z_]{1,60}$/;

/** RFC 6749 2.3.1: client ID and secret are form-encoded before they are joined and base64-encoded. */
function basicClientAuthentication(clientId: string, clientSecret: string): string {
  const encode = (value: string): string => new URLSearchParams({ v: value }).toString().slice(2);
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(clientSecret)}`, 'utf8').toString('base64')}`;
}

function formOf(request: TokenRequest): string {
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (request.scopes.length > 0) form.set('scope', request.scopes.join(' '));
  if (request.audience !== undefined) form.set('audience', request.audience);
  if (request.clientAuthentication === 'body') {
    form.set('client_id', request.clientId);
    form.set('client_secret', request.clientSecret);
  }
  return form.toString();
}

/** Reads at most {@link MAX_ANSWER_BYTES} of a body; undefined when it is longer (the rest is discarded). */
async function boundedText(body: AsyncIterable<Buffer>): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_ANSWER_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parsedJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The token in a 200 answer, or the refusal naming what was wrong with the answer (never its content). */
function tokenOf(endpoint: string, status: number, text: string | undefined): IssuedToken {
  const json = parsedJson(text);
  if (status !== 200) {
    const code = (json as { error?: unknown } | undefined)?.error;
    const named = typeof code === 'string' && ERROR_CODE.test(code) ? ` (${code})` : '';
    const redirect = status >= 300 && status < 400 ? ': redirects are not followed' : '';
    throw new CredentialUnavailableError(`the token endpoint ${endpoint} answered ${status}${named}${redirect}`);
  }
  const parsed = tokenAnswerSchema.safeParse(json);
  if (!parsed.success) {
    const fields = [...new Set(parsed.error.issues.map((issue) => String(issue.path[0] ?? 'body')))].join(', ');
    throw new CredentialUnavailableError(`the token endpoint ${endpoint} gave no usable token (${fields})`);
  }
  const seconds = parsed.data.expires_in;
  return { accessToken: parsed.data.access_token, lifetimeMs: seconds === undefined ? undefined : seconds * 1000 };
}

/**
 * Requests an access token. Throws {@link CredentialUnavailableError} when the endpoint cannot be reached or gives
 * no usable token; its message never holds the answer's content, the client secret or a token.
 */
export async function requestToken(request: TokenRequest): Promise<IssuedToken> {
  const url = new URL(request.tokenUrl);
  const endpoint = `${url.origin}${url.pathname}`;
  const client = new Client(url.origin, {
    connect: { timeout: request.timeoutMs },
    headersTimeout: request.timeoutMs,
    bodyTimeout: request.timeoutMs,
  });
  try {
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    };
    if (request.clientAuthentication === 'basic')
      headers.authorization = basicClientAuthentication(request.clientId, request.clientSecret);
    let answer: { status: number; text: string | undefined };
    try {
      const response = await client.request({
        method: 'POST',
        path: `${url.pathname}${url.search}`,
        headers,
        body: formOf(request),
      });
      answer = { status: response.statusCode, text: await boundedText(response.body) };
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      throw new CredentialUnavailableError(
        `the token endpoint ${endpoint} could not be reached${typeof code === 'string' ? ` (${code})` : ''}`,
      );
    }
    return tokenOf(endpoint, answer.status, answer.text);
  } finally {
    await client.destroy().catch(() => undefined);
  }
}
