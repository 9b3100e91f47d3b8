/**
 * What one HTTP call produced, as data: the `HttpExchange` that `send` and `download` always resolve to, the
 * error categories, and the pure classification of a transport failure by the phase it happened in. The
 * phase, not the error's wording, decides whether the provider can have seen the request: before undici
 * starts writing the request on a connected socket nothing can have reached the provider (`not_sent`); from
 * then on any failure is `ambiguous` (a false "not sent" could launch a job twice, U1).
 */
import { type TransportOutcome } from '../../core/journal';

/** The stable failure categories carried in `HttpExchange.errorCategory`. */
export type HttpErrorCategory =
  /** not_sent: the TCP connection was refused. */
  | 'connect_refused'
  /** not_sent: the host name did not resolve. */
  | 'dns'
  /** not_sent: no connection within `connectTimeoutMs`. */
  | 'connect_timeout'
  /** not_sent: the TLS handshake failed (certificate, protocol). */
  | 'tls'
  /** not_sent: the connection broke while it was being set up. */
  | 'connect_reset'
  /** not_sent: any other failure before the request was written. */
  | 'connect_failed'
  /** not_sent: the caller refused the write at its instant (`onWritten` returned false: a send slot had passed, or a status read's deadline had come, S3). */
  | 'send_window_missed'
  /** ambiguous: no response headers within `headersTimeoutMs` after the request was written. */
  | 'timeout_after_send'
  /** ambiguous: the connection broke after the request was (being) written and before any response. */
  | 'reset_after_send'
  /** ambiguous: the response body stalled for `bodyTimeoutMs`. */
  | 'body_timeout'
  /** ambiguous: the response body ended early (premature close, fewer bytes than Content-Length). */
  | 'truncated'
  /** ambiguous: another transport failure after the request was (being) written. */
  | 'transport_error_after_send'
  /** body_too_large: the body exceeded the configured maximum and was cut off. */
  | 'body_too_large'
  /** refused: the URL is not on the provider's origin; nothing was sent (C4). */
  | 'foreign_origin'
  /** refused: the URL does not parse, is not http(s), or carries user information. */
  | 'invalid_url'
  /** refused: the credential supplier failed or returned an unusable header; nothing was sent. */
  | 'credential_unavailable'
  /** response: a 4xx status. */
  | 'http_4xx'
  /** response: a 5xx status. */
  | 'http_5xx';

/** The request as recorded: method, URL without secrets, headers redacted (the credential header shows `[redacted]`). */
interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * One HTTP exchange as data. Safe to record: headers are lower-cased and redacted, secret JSON fields and
 * bearer tokens are redacted in the body, and the credential's value appears nowhere.
 */
export interface HttpExchange {
  /** How the exchange ended (`transportOutcomeSchema` in core/journal). */
  readonly outcome: TransportOutcome;
  /** The HTTP status, when response headers arrived (also on `ambiguous` with a truncated body). */
  readonly status?: number;
  /** Response headers, lower-case names, redacted; `{}` when none arrived. */
  readonly headers: Readonly<Record<string, string>>;
  /** The response body as UTF-8 text, redacted, at most `maxBodyBytes` bytes (absent for downloads streamed to a sink). */
  readonly bodyText?: string;
  /** The body parsed as JSON (redacted), when the content type is JSON (or absent) and it parses. */
  readonly bodyJson?: unknown;
  /** Why a non-empty body did not become `bodyJson`. */
  readonly bodyParseError?: string;
  /** Body bytes received (up to the point of cut-off or failure). */
  readonly bodyBytes: number;
  /** The provider's request ID from the first configured header present (`x-request-id`, `x-ms-request-id`, `request-id`). */
  readonly providerRequestId?: string;
  /** Set for every outcome except a 1xx-3xx `response`. */
  readonly errorCategory?: HttpErrorCategory;
  /** A short, redacted description of the failure for operators. */
  readonly errorMessage?: string;
  /** Wall time from the start of `send` to the end of the exchange, ms (monotonic clock). */
  readonly durationMs: number;
  /** When `send` started, epoch ms. */
  readonly startedAtMs: number;
  /** When the answer (or the failure) arrived, epoch ms. */
  readonly receivedAtMs: number;
  /** The request as sent (or as it would have been sent, for `refused`), redacted. */
  readonly request: RecordedRequest;
  /**
   * Set when the request was sent twice (T4): the provider answered this first attempt 401, the authoriser renewed
   * the credential, and the request, safe to resend, was resent once; everything else here is the second attempt.
   */
  readonly rejectedAttempt?: RejectedAttempt;
}

/** The first attempt of a request resent once after its credential was renewed: what the provider answered. */
export interface RejectedAttempt {
  /** Always 401: only a refused credential is renewed and resent. */
  readonly status: number;
  /** Its response headers, lower-case names, redacted (`www-authenticate` says why). */
  readonly headers: Readonly<Record<string, string>>;
  readonly providerRequestId?: string;
  /** When it started, epoch ms, and how long it took, ms. */
  readonly startedAtMs: number;
  readonly durationMs: number;
}

/** Integrity data of a body streamed to a sink. */
export interface DownloadedBody {
  /** Bytes given to the sink. */
  readonly sizeBytes: number;
  /** Lower-case hex SHA-256 of the bytes given to the sink. */
  readonly sha256: string;
  /** True when the whole body arrived (and matched Content-Length, if one was sent). */
  readonly complete: boolean;
  /** The Content-Length the provider announced, if any. */
  readonly expectedSizeBytes?: number;
}

/** A download's exchange: `download` is present when a 2xx body was streamed to the sink (even partly). */
export interface HttpDownload extends HttpExchange {
  readonly download?: DownloadedBody;
}

/** How far an exchange got before it failed. */
export type ExchangePhase = 'connecting' | 'writing_request' | 'awaiting_headers' | 'reading_body';

const SOCKET_CODES = new Set([
  'UND_ERR_SOCKET',
  'ECONNRESET',
  'EPIPE',
  'ECONNABORTED',
  'UND_ERR_CLOSED',
  'UND_ERR_ABORTED',
]);
const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'EAI_NODATA']);

function isTlsError(code: string, message: string): boolean {
  return (
    code.startsWith('ERR_TLS') ||
    code.startsWith('ERR_SSL') ||
    code === 'EPROTO' ||
    /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|HOSTNAME_MISMATCH/.test(code) ||
    /\b(SSL|TLS)\b/i.test(message)
  );
}

/**
 * Classifies a transport failure (never an HTTP status) by the phase it happened in and the error's code.
 * Pure. Before the request is written: `not_sent`; afterwards: `ambiguous`.
 */
export function classifyTransportFailure(
  phase: ExchangePhase,
  error: { readonly code?: unknown; readonly message?: unknown },
): { outcome: 'not_sent' | 'ambiguous'; errorCategory: HttpErrorCategory } {
  const code = typeof error.code === 'string' ? error.code : '';
  const message = typeof error.message === 'string' ? error.message : '';
  if (phase === 'connecting') {
    if (code === 'ECONNREFUSED') return { outcome: 'not_sent', errorCategory: 'connect_refused' };
    if (DNS_CODES.has(code)) return { outcome: 'not_sent', errorCategory: 'dns' };
    if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ETIMEDOUT')
      return { outcome: 'not_sent', errorCategory: 'connect_timeout' };
    if (isTlsError(code, message)) return { outcome: 'not_sent', errorCategory: 'tls' };
    if (SOCKET_CODES.has(code)) return { outcome: 'not_sent', errorCategory: 'connect_reset' };
    return { outcome: 'not_sent', errorCategory: 'connect_failed' };
  }
  if (phase === 'reading_body') {
    if (code === 'UND_ERR_BODY_TIMEOUT') return { outcome: 'ambiguous', errorCategory: 'body_timeout' };
    return { outcome: 'ambiguous', errorCategory: 'truncated' };
  }
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return { outcome: 'ambiguous', errorCategory: 'timeout_after_send' };
  if (SOCKET_CODES.has(code)) return { outcome: 'ambiguous', errorCategory: 'reset_after_send' };
  return { outcome: 'ambiguous', errorCategory: 'transport_error_after_send' };
}
