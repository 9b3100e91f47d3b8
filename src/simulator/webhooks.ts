/**
 * Webhook callbacks from the simulated provider: signed as docs/dialects.md says (`X-Signature: t=<unix
 * seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`), delivered once, twice, out of order, late, or with
 * a bad signature.
 */
import { createHmac } from 'node:crypto';
import { request } from 'undici';
import type { WebhookDelivery } from './scenario';

/** Where callbacks go and the shared secret that signs them. */
export interface WebhookTarget {
  url: string;
  secret: string;
}

/** The JSON body of one callback. */
export interface WebhookEvent {
  event_id: string;
  /** The job ID as used in paths (for lro, without the `operations/` prefix). */
  job_id: string;
  state: string;
  occurred_at: string;
}

/** One delivery attempt, as recorded. */
export interface WebhookDeliveryRecord {
  eventId: string;
  jobId: string;
  state: string;
  /** When the POST was sent (simulator clock, ms). */
  atMs: number;
  /** Whether the signature was made with the configured secret (false for the `bad_signature` mode). */
  signedCorrectly: boolean;
  /** The receiver's status, or undefined when the POST failed (see `error`). */
  status?: number;
  error?: string;
}

/** Computes the `X-Signature` header value for a raw body at `timestampSeconds`. Pure. */
export function signWebhook(secret: string, rawBody: string, timestampSeconds: number): string {
  const v1 = createHmac('sha256', secret).update(`${timestampSeconds}.${rawBody}`).digest('hex');
  return `t=${timestampSeconds},v1=${v1}`;
}

/** Sends webhook events according to each job's delivery mode and records every attempt. */
export class WebhookDispatcher {
  private readonly held = new Map<string, WebhookEvent[]>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly records: WebhookDeliveryRecord[] = [];
  private stopped = false;

  constructor(
    private target: WebhookTarget | undefined,
    private readonly clock: () => number,
    private readonly maxRecords = 10_000,
  ) {}

  /** Replaces the target (undefined switches delivery off). */
  setTarget(target: WebhookTarget | undefined): void {
    this.target = target;
  }

  /** Whether a target is configured. */
  enabled(): boolean {
    return this.target !== undefined;
  }

  /**
   * Handles one event of a job: sends it as the mode says. `terminal` tells the `out_of_order` mode when to
   * release the events it held back (the terminal event goes first, the earlier ones after it).
   */
  emit(event: WebhookEvent, delivery: WebhookDelivery, terminal: boolean): void {
    if (!this.target || this.stopped) return;
    switch (delivery.mode) {
      case 'none':
        return;
      case 'once':
        this.schedule(event, delivery.delayMs, true);
        return;
      case 'twice':
        this.schedule(event, delivery.delayMs, true);
        this.schedule(event, delivery.delayMs, true);
        return;
      case 'bad_signature':
        this.schedule(event, delivery.delayMs, false);
        return;
      case 'out_of_order': {
        if (!terminal) {
          const list = this.held.get(event.job_id) ?? [];
          list.push(event);
          this.held.set(event.job_id, list);
          return;
        }
        const earlier = this.held.get(event.job_id) ?? [];
        this.held.delete(event.job_id);
        // Sequential on purpose: the receiver must see the terminal event before the older ones.
        this.chain([event, ...earlier], delivery.delayMs);
        return;
      }
    }
  }

  /** Sends one event now (or after `delayMs`) and resolves with its record. */
  async deliver(
    event: WebhookEvent,
    options: { signedCorrectly?: boolean; delayMs?: number } = {},
  ): Promise<WebhookDeliveryRecord> {
    if (options.delayMs) await this.wait(options.delayMs);
    return this.send(event, options.signedCorrectly ?? true);
  }

  /** Every delivery attempt so far, in send order. */
  deliveries(): WebhookDeliveryRecord[] {
    return this.records.slice();
  }

  /** Forgets records and held events; cancels scheduled deliveries. */
  clear(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.held.clear();
    this.records.length = 0;
  }

  /** Stops scheduling and waits for deliveries already in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await Promise.allSettled([...this.inFlight]);
  }

  private schedule(event: WebhookEvent, delayMs: number, signedCorrectly: boolean): void {
    const run = (): void => {
      const p = this.send(event, signedCorrectly).then(() => undefined);
      this.inFlight.add(p);
      void p.finally(() => this.inFlight.delete(p));
    };
    if (delayMs > 0) {
      const t = setTimeout(() => {
        this.timers.delete(t);
        run();
      }, delayMs);
      t.unref();
      this.timers.add(t);
    } else {
      setImmediate(run);
    }
  }

  private chain(events: WebhookEvent[], delayMs: number): void {
    const p = (async () => {
      if (delayMs > 0) await this.wait(delayMs);
      for (const e of events) {
        if (this.stopped) return;
        await this.send(e, true);
      }
    })();
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.timers.delete(t);
        resolve();
      }, ms);
      t.unref();
      this.timers.add(t);
    });
  }

  private async send(event: WebhookEvent, signedCorrectly: boolean): Promise<WebhookDeliveryRecord> {
    const target = this.target;
    const record: WebhookDeliveryRecord = {
      eventId: event.event_id,
      jobId: event.job_id,
      state: event.state,
      atMs: this.clock(),
      signedCorrectly,
    };
    if (!target) {
      record.error = 'no webhook target configured';
      return record;
    }
    const body = JSON.stringify(event);
    const secret = signedCorrectly ? target.secret : `${target.secret}-wrong`;
    try {
      const res = await request(target.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-signature': signWebhook(secret, body, Math.floor(record.atMs / 1000)),
        },
        body,
        headersTimeout: 10_000,
        bodyTimeout: 10_000,
      });
      record.status = res.statusCode;
      await res.body.dump();
    } catch (err) {
      record.error = err instanceof Error ? err.message : String(err);
    }
    if (this.records.length >= this.maxRecords) this.records.shift();
    this.records.push(record);
    return record;
  }
}
