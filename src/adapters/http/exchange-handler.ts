/**
 * One HTTP exchange as an undici dispatch handler, on undici's documented handler API (`Dispatcher.DispatchHandler`:
 * `onRequestStart`, `onResponseStart`, `onResponseData`, `onResponseEnd`, `onResponseError`). It settles `result`
 * exactly once: an `ExchangeResult` for anything the network or the provider did, a rejection only for our own
 * faults (a request undici refuses, a failing download sink).
 *
 * The phase only moves forward and decides whether the provider can have seen the request (U1). undici calls
 * `onRequestStart` on a connected socket synchronously before it writes the request head: until then the phase is
 * `connecting` and any failure is `not_sent`; from then on any failure is `ambiguous`. This instant is also the
 * request's send instant: reported to `onWritten` (the request pacer spaces requests by it, and may refuse it:
 * then nothing is written and the exchange is `not_sent`) and published on
 * {@link REQUEST_WRITTEN_CHANNEL}. undici's documented API has no "request written" callback (the legacy
 * `onRequestSent` is not forwarded to handlers of this API), so the phase goes from `writing_request` straight to
 * `reading_body`; `classifyTransportFailure` treats `writing_request` and `awaiting_headers` alike.
 * `test/adapters/http/send-boundary.test.ts` pins which callback fires when, against real sockets.
 */
import { createHash } from 'node:crypto';
import { channel } from 'node:diagnostics_channel';
import { type IncomingHttpHeaders } from 'node:http';
import { type Dispatcher } from 'undici';
import { AsyncJobError } from '../../core/errors';
import { InvalidHttpRequestError } from './errors';
import {
  classifyTransportFailure,
  type DownloadedBody,
  type ExchangePhase,
  type HttpDownload,
  type HttpErrorCategory,
} from './exchange';
import { redactHeaders, redactText, type RedactionRules } from './redact';
import {
  announcedLength,
  decodeBody,
  headerLists,
  providerRequestIdOf,
  type BodyMode,
  type BodyReading,
} from './response-body';

/** The diagnostics channel on which every request written to a provider is published ({@link RequestWrittenMessage}). */
export const REQUEST_WRITTEN_CHANNEL = 'asyncjob:http:request-written';

/** A message of {@link REQUEST_WRITTEN_CHANNEL}: no path, headers or body, so nothing secret. */
export interface RequestWrittenMessage {
  /** The provider's origin. */
  readonly origin: string;
  readonly method: string;
  /** When undici started writing the request (`performance.now()` of this process, ms). */
  readonly writtenAtMs: number;
}

const requestWritten = channel(REQUEST_WRITTEN_CHANNEL);

/** What the handler resolves to; the client adds the timing and the recorded request. */
export type ExchangeResult = Omit<HttpDownload, 'durationMs' | 'startedAtMs' | 'receivedAtMs' | 'request'>;

/** What one exchange needs to know. */
export interface ExchangeSettings {
  readonly origin: string;
  readonly method: string;
  readonly mode: BodyMode;
  /** The most body bytes taken (`maxBodyBytes`, or `maxDownloadBytes` for a download). */
  readonly limitBytes: number;
  readonly rules: RedactionRules;
  readonly requestIdHeaders: readonly string[];
  /** V3: receives the answer's `Set-Cookie` values as soon as the headers arrive. */
  readonly onSetCookies?: ((values: readonly string[]) => void) | undefined;
  /** Receives the send instant ({@link RequestWrittenMessage.writtenAtMs}); `false` refuses the write. */
  readonly onWritten?: ((writtenAtMs: number) => boolean | void) | undefined;
  /** V6: how a body read into memory is decoded. */
  readonly reading?: BodyReading;
}

/** How far a download's sink may fall behind the socket before the parser is paused. */
const SINK_BACKLOG_BYTES = 4 * 1024 * 1024;

/**
 * Whether the answer keeps its connection open after the body: delimited by a length or by chunks, and not
 * `Connection: close`. undici's handler API does not give the HTTP version, so an HTTP/1.0 answer with a length
 * and no Connection header counts as kept alive; the backlog threshold limits that case to a sink far behind.
 */
function keepsConnection(headers: Readonly<Record<string, string[]>>): boolean {
  const connection = (headers['connection'] ?? []).join(',').toLowerCase();
  if (connection.includes('close')) return false;
  const chunked = (headers['transfer-encoding'] ?? []).join(',').toLowerCase().includes('chunked');
  return chunked || headers['content-length'] !== undefined;
}

const PHASES: readonly ExchangePhase[] = ['connecting', 'writing_request', 'awaiting_headers', 'reading_body'];

function statusCategory(status: number): HttpErrorCategory | undefined {
  return status >= 500 ? 'http_5xx' : status >= 400 ? 'http_4xx' : undefined;
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/** The HTTP exchange of one request: give it to `Dispatcher.dispatch`, await `result`. Not reusable. */
export class ExchangeHandler implements Dispatcher.DispatchHandler {
  /** Settles once, when the exchange is over (after the sink has taken every chunk). */
  readonly result: Promise<ExchangeResult>;
  private resolveResult!: (result: ExchangeResult) => void;
  private rejectResult!: (error: Error) => void;
  private settled = false;
  private phase: ExchangePhase = 'connecting';
  private controller: Dispatcher.DispatchController | undefined;
  private status: number | undefined;
  private headers: Record<string, string[]> = {};
  private expectedBytes: number | undefined;
  private receivedBytes = 0;
  private streaming = false;
  private readonly chunks: Buffer[] = [];
  private readonly hash = createHash('sha256');
  /** The sink's writes, chained in order; the exchange settles only after the last one. */
  private writes: Promise<void> = Promise.resolve();
  private pendingWrites = 0;
  /** Bytes handed to the sink and not yet written. */
  private pendingBytes = 0;
  /** Whether pausing the parser is safe for this answer (see {@link mayPause}). */
  private pausable = false;
  private stopReason: 'too_large' | 'sink' | undefined;
  /** `onWritten` refused the write: nothing was sent. */
  private windowMissed = false;
  private sinkError: unknown;

  constructor(private readonly settings: ExchangeSettings) {
    this.result = new Promise<ExchangeResult>((resolve, reject) => {
      this.resolveResult = resolve;
      this.rejectResult = reject;
    });
  }

  /**
   * On a connected socket, synchronously before undici writes the request: from here on, the request is sent,
   * unless `onWritten` refuses this instant. Aborted here, undici writes nothing (it checks before the first byte)
   * and closes the connection; the exchange is `not_sent` (`send_window_missed`).
   */
  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    const writtenAtMs = performance.now();
    let refused = false;
    try {
      refused = this.settings.onWritten?.(writtenAtMs) === false;
    } catch {
      // An observer that throws never changes whether or how the request is written.
    }
    if (refused) {
      this.windowMissed = true;
      controller.abort(new Error('not written: the send slot had passed'));
      return;
    }
    this.advance('writing_request');
    if (requestWritten.hasSubscribers) {
      const message: RequestWrittenMessage = {
        origin: this.settings.origin,
        method: this.settings.method,
        writtenAtMs,
      };
      requestWritten.publish(message);
    }
  }

  /** The answer's status and headers (informational 1xx answers are skipped). */
  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200) return;
    this.controller = controller;
    this.advance('reading_body');
    this.status = statusCode;
    this.headers = headerLists(headers);
    // V3: cookies are taken as soon as the headers arrive (RFC 6265 5.3), even if the body fails later.
    const setCookies = this.headers['set-cookie'];
    if (this.settings.onSetCookies !== undefined && setCookies !== undefined && setCookies.length > 0)
      this.settings.onSetCookies(setCookies);
    this.expectedBytes = announcedLength(this.headers, this.settings.method, statusCode);
    this.streaming = this.settings.mode.kind === 'sink' && statusCode >= 200 && statusCode < 300;
    this.pausable = keepsConnection(this.headers);
    if (this.expectedBytes !== undefined && this.expectedBytes > this.settings.limitBytes) {
      // Why: refuse before reading a byte when the provider announces a body over the limit.
      this.stop('too_large', new AsyncJobError('ASYNCJOB_ERR_BODY_TOO_LARGE', 'announced body over the limit'));
    }
  }

  /** One body chunk: counted against the limit, then kept (`send`) or handed to the sink (`download`). */
  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.stopReason) return;
    // Why: undici may hand over empty chunks (e.g. while a paused parser drains on close); pausing on them loops.
    if (chunk.length === 0) return;
    if (this.receivedBytes + chunk.length > this.settings.limitBytes) {
      this.stop('too_large', new AsyncJobError('ASYNCJOB_ERR_BODY_TOO_LARGE', 'body over the limit'));
      return;
    }
    this.receivedBytes += chunk.length;
    if (!this.streaming || this.settings.mode.kind !== 'sink') {
      this.chunks.push(chunk);
      return;
    }
    this.hash.update(chunk);
    const write = this.settings.mode.write;
    this.pendingWrites += 1;
    this.pendingBytes += chunk.length;
    this.writes = this.writes.then(() => write(chunk));
    this.writes.then(
      () => {
        this.pendingWrites -= 1;
        this.pendingBytes -= chunk.length;
        if (this.pendingWrites === 0) controller.resume();
      },
      (err: unknown) => {
        this.sinkError ??= err;
        this.stop('sink', new AsyncJobError('ASYNCJOB_ERR_HTTP_SINK_FAILED', 'sink failed'));
      },
    );
    if (this.mayPause()) controller.pause();
  }

  /**
   * Why: hold the socket while the sink is behind, so a slow sink never makes us buffer much of the body. Only
   * where undici survives it: its parser asserts it is not paused when a connection that is not kept alive ends
   * (a body delimited by the close, `Connection: close`, a truncated body), and that assertion ends the process.
   * So the parser is paused only on a kept-alive connection, before the last announced byte, once the sink is
   * more than {@link SINK_BACKLOG_BYTES} behind.
   */
  private mayPause(): boolean {
    if (!this.pausable || this.pendingBytes <= SINK_BACKLOG_BYTES) return false;
    return this.expectedBytes === undefined || this.receivedBytes < this.expectedBytes;
  }

  /** The body ended: settles once the sink has taken every chunk. */
  onResponseEnd(): void {
    this.writes.then(
      () => this.completed(),
      // A sink failure after the last chunk: reported as such (the socket is already done).
      () => this.settle(() => this.rejectResult(this.sinkFailure())),
    );
  }

  /**
   * The exchange failed: before `onRequestStart` (undici then passes no controller), after it, or because we cut
   * it off. Settles once the sink's pending writes are done.
   */
  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    this.writes.then(
      () => this.failed(error),
      () => this.failed(error),
    );
  }

  /** Moves the phase forward only: a late or repeated callback never takes it back before the send. */
  private advance(next: ExchangePhase): void {
    if (PHASES.indexOf(next) > PHASES.indexOf(this.phase)) this.phase = next;
  }

  private settle(finish: () => void): void {
    if (this.settled) return;
    this.settled = true;
    finish();
  }

  private stop(reason: 'too_large' | 'sink', error: Error): void {
    this.stopReason ??= reason;
    this.controller?.abort(error);
  }

  private sinkFailure(): AsyncJobError {
    return new AsyncJobError('ASYNCJOB_ERR_HTTP_SINK_FAILED', 'the download sink failed', {
      cause: this.sinkError,
    });
  }

  private download(complete: boolean): DownloadedBody | undefined {
    if (!this.streaming) return undefined;
    return {
      sizeBytes: this.receivedBytes,
      sha256: this.hash.copy().digest('hex'),
      complete,
      ...optional('expectedSizeBytes', this.expectedBytes),
    };
  }

  /** What every result carries: the status (when one arrived), the headers (redacted), the bytes, the request ID. */
  private answered(): Omit<ExchangeResult, 'outcome'> {
    return {
      headers: redactHeaders(this.headers, this.settings.rules),
      bodyBytes: this.receivedBytes,
      ...optional('status', this.status),
      ...optional(
        'providerRequestId',
        providerRequestIdOf(this.headers, this.settings.requestIdHeaders, this.settings.rules),
      ),
    };
  }

  private completed(): void {
    if (this.stopReason) return;
    const expected = this.expectedBytes;
    const truncated = expected !== undefined && this.receivedBytes < expected;
    const status = this.status ?? 0;
    const common = { ...this.answered(), status, ...optional('download', this.download(!truncated)) };
    if (truncated) {
      const errorMessage = `received ${this.receivedBytes} of ${expected} announced bytes`;
      this.settle(() =>
        this.resolveResult({ ...common, outcome: 'ambiguous', errorCategory: 'truncated', errorMessage }),
      );
      return;
    }
    const body = this.streaming
      ? {}
      : decodeBody(
          Buffer.concat(this.chunks),
          this.headers['content-type']?.[0],
          this.settings.rules,
          this.settings.reading,
        );
    this.settle(() =>
      this.resolveResult({
        ...common,
        outcome: 'response',
        ...optional('errorCategory', statusCategory(status)),
        ...body,
      }),
    );
  }

  private failed(error: Error): void {
    const code = (error as { code?: unknown }).code;
    const { rules } = this.settings;
    if (code === 'UND_ERR_INVALID_ARG' || code === 'UND_ERR_NOT_SUPPORTED') {
      const message = `undici refused the request: ${redactText(error.message, rules)}`;
      this.settle(() => this.rejectResult(new InvalidHttpRequestError('request', message)));
      return;
    }
    if (this.windowMissed) {
      const errorMessage = 'not written: the send slot had passed';
      this.settle(() =>
        this.resolveResult({
          ...this.answered(),
          outcome: 'not_sent',
          errorCategory: 'send_window_missed',
          errorMessage,
        }),
      );
      return;
    }
    if (this.stopReason === 'sink') {
      this.settle(() => this.rejectResult(this.sinkFailure()));
      return;
    }
    if (this.stopReason === 'too_large') {
      const announced = this.expectedBytes !== undefined ? ` (Content-Length ${this.expectedBytes})` : '';
      const errorMessage = `the body exceeded ${this.settings.limitBytes} bytes${announced}; cut off`;
      this.settle(() =>
        this.resolveResult({
          ...this.answered(),
          outcome: 'body_too_large',
          errorCategory: 'body_too_large',
          errorMessage,
          ...optional('download', this.download(false)),
        }),
      );
      return;
    }
    const { outcome, errorCategory } = classifyTransportFailure(this.phase, error);
    const described = `${typeof code === 'string' ? `${code}: ` : ''}${error.message}`.slice(0, 500);
    this.settle(() =>
      this.resolveResult({
        ...this.answered(),
        outcome,
        errorCategory,
        errorMessage: redactText(described, rules),
        ...optional('download', this.download(false)),
      }),
    );
  }
}
