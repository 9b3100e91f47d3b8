/**
 * Session mode (V3): the simulator behaves like a provider that keeps state in a cookie. The create answer opens
 * a job's session, the listed job actions are refused without its current value, and `rotate` replaces the value
 * on every accepted answer. Values are compared in constant time and never recorded, only kept in-process.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { SessionSeen } from './accounting';
import type { SimResponse, SimRoute } from './dialects/types';
import type { SimJob } from './jobs';
import type { SessionSettings } from './scenario';

/** The session cookie values of every job (by raw job ID). */
export class SessionRegistry {
  /** The current value of each job. */
  private readonly current = new Map<string, string>();
  /** Every value issued per job, oldest first. */
  private readonly issued = new Map<string, string[]>();

  /** @param settings the active scenario's session settings (read per request: a new scenario applies at once). */
  constructor(private readonly settings: () => SessionSettings | undefined) {}

  /** Whether session mode is on and `action` needs the session cookie. */
  required(action: SimRoute['action']): boolean {
    const session = this.settings();
    return session?.cookie === true && (session.requireOn as readonly string[]).includes(action);
  }

  /** Whether the request carries the job's current session cookie (compared in constant time). */
  seen(req: IncomingMessage, jobId: string): SessionSeen {
    const name = this.settings()?.name ?? 'sim_session';
    const header = req.headers.cookie;
    const pairs = (Array.isArray(header) ? header.join('; ') : (header ?? '')).split(';').map((p) => p.trim());
    const sent = pairs.find((p) => p.startsWith(`${name}=`))?.slice(name.length + 1);
    if (sent === undefined) return 'absent';
    const expected = this.current.get(jobId);
    if (expected === undefined) return 'invalid';
    const sentBytes = Buffer.from(sent);
    const expectedBytes = Buffer.from(expected);
    return sentBytes.length === expectedBytes.length && timingSafeEqual(sentBytes, expectedBytes) ? 'valid' : 'invalid';
  }

  /**
   * A 2xx create answer opens the job's session (a repeated create gets the same one), and with `rotate` every
   * accepted answer of a session action (`checked`) sets a new value. Other answers are returned unchanged.
   */
  withCookie(
    action: SimRoute['action'],
    checked: boolean,
    job: SimJob | undefined,
    response: SimResponse,
  ): SimResponse {
    const session = this.settings();
    if (session?.cookie !== true || job === undefined || response.status < 200 || response.status >= 300)
      return response;
    let value: string | undefined;
    if (action === 'create') value = this.current.get(job.id) ?? randomBytes(16).toString('hex');
    else if (checked && session.rotate) value = randomBytes(16).toString('hex');
    if (value === undefined) return response;
    if (this.current.get(job.id) !== value)
      (this.issued.get(job.id) ?? this.issued.set(job.id, []).get(job.id)!).push(value);
    this.current.set(job.id, value);
    return {
      ...response,
      headers: { ...response.headers, 'set-cookie': `${session.name}=${value}; Path=/; HttpOnly` },
    };
  }

  /** Every value issued for a job (raw ID), oldest first. */
  issuedFor(jobId: string): string[] {
    return [...(this.issued.get(jobId) ?? [])];
  }

  /** Forgets every session. */
  clear(): void {
    this.current.clear();
    this.issued.clear();
  }
}
