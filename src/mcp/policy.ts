/**
 * The operator's agent policy (G1, G3): which agent identities may call the MCP server, how each is recognised
 * (an HTTP bearer token, kept only as its SHA-256 digest), and the bounds each acts inside: providers with their
 * longest deadlines and largest budgets, whether it may request cancels, and which results it may read. Written
 * by an operator as YAML or JSON, validated with zod; a bad file is refused with every problem named, never
 * echoing a token.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { parseDuration } from '../cli/duration';
import { actorInputSchema, sameActor } from '../core/actor';
import { PolicyFileError, type PolicyIssue, policyIssues, readPolicyDocument } from '../policy/policy-file';
import { pollPolicySchema } from '../core/policy';
import { idSchema } from '../core/start-request';

/**
 * An agent identity as recorded in the journal: `agent:<name>`, so a story never mistakes an agent for a person;
 * canonical (D1), so `Agent:Alpha` and `agent:alpha` are one agent.
 */
const agentIdentitySchema = z
  .string()
  .regex(/^agent:[a-z0-9._-]{1,100}$/i, 'must be agent:<name> (letters, digits, . _ -)')
  .pipe(actorInputSchema);

/** The most a `wait_for_change` may be allowed to wait (MCP clients time requests out after about a minute). */
const MAX_WAIT_BOUND_MS = 55_000;

/** The largest result body an operator may let an agent read in one call. */
const MAX_BODY_BYTES_BOUND = 4 * 1024 * 1024;

const durationText = z.string().transform((text, ctx) => {
  const parsed = parseDuration(text);
  if (parsed.kind === 'ok') return parsed.ms;
  ctx.addIssue({ code: 'custom', message: parsed.message });
  return z.NEVER;
});

/** One provider an agent may use, with the bounds of what it may ask for there. */
const providerGrantSchema = z
  .object({
    name: idSchema,
    /** The longest create deadline the agent may ask for, as a duration (`5m`). */
    maxCreateDeadline: durationText,
    /** The longest result deadline the agent may ask for (`2h`); also the most one extension request may ask. */
    maxResultDeadline: durationText,
    /** The most status requests the agent may ask for; also the most one extension request may ask. */
    maxStatusRequests: z.number().int().min(1).max(1_000_000),
    /** The poll policy applied to every start (the operator's, never the agent's): P2 delays, budgets, windows. */
    pollPolicy: z.record(z.string(), z.unknown()).optional(),
  })
  .strict()
  .superRefine((grant, ctx) => {
    if (grant.pollPolicy === undefined) return;
    const parsed = pollPolicySchema.safeParse(grant.pollPolicy);
    if (!parsed.success)
      for (const issue of parsed.error.issues)
        ctx.addIssue({ code: 'custom', path: ['pollPolicy', ...issue.path.map(String)], message: issue.message });
    if ('maxStatusRequests' in grant.pollPolicy)
      ctx.addIssue({
        code: 'custom',
        path: ['pollPolicy', 'maxStatusRequests'],
        message: 'set by the agent within maxStatusRequests, not here',
      });
  });
/** A provider grant, durations in milliseconds. */
export type ProviderGrant = Omit<z.infer<typeof providerGrantSchema>, 'maxCreateDeadline' | 'maxResultDeadline'> & {
  maxCreateDeadlineMs: number;
  maxResultDeadlineMs: number;
};

/** How an HTTP agent is recognised: the SHA-256 of its token, or a reference to where the token is kept. */
const tokenReferenceSchema = z.union([
  z.object({ sha256: z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex characters') }).strict(),
  z
    .object({ secretEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name') })
    .strict(),
  z.object({ secretFile: z.string().min(1) }).strict(),
]);

const resultAccessSchema = z
  .object({
    /** `summary`: the result summary only; `body`: also the validated body, up to `maxBodyBytes`. */
    read: z.enum(['summary', 'body']).default('summary'),
    maxBodyBytes: z
      .number()
      .int()
      .min(1)
      .max(MAX_BODY_BYTES_BOUND)
      .default(64 * 1024),
  })
  .strict();

const agentSchema = z
  .object({
    identity: agentIdentitySchema,
    /** Required for Streamable HTTP; an identity without one can only be the stdio identity. */
    token: tokenReferenceSchema.optional(),
    /** Recorded as `authorisedBy` of this agent's starts; defaults to the file's `authorisedBy`. */
    authorisedBy: actorInputSchema.optional(),
    providers: z.array(providerGrantSchema).min(1),
    mayCancel: z.boolean().default(false),
    results: resultAccessSchema.default({ read: 'summary', maxBodyBytes: 64 * 1024 }),
    /** The longest single `wait_for_change` (default 30s, at most 55s). */
    maxWait: durationText.default(30_000),
  })
  .strict();

/** The policy file. */
const agentPolicyFileSchema = z
  .object({
    version: z.literal(1),
    /** Who authorised the agents' starts (the operator or the policy's name), e.g. `policy:agents@ops`. */
    authorisedBy: actorInputSchema,
    /** The identity `asyncjob mcp` runs as over stdio (unless `--identity` names another). */
    stdioIdentity: agentIdentitySchema.optional(),
    agents: z.array(agentSchema).min(1),
    /** Who may decide escalations: read by the worker (`src/policy/decider-policy-file.ts`), not here. */
    deciders: z.unknown().optional(),
  })
  .strict()
  .superRefine((file, ctx) => {
    const seen = new Set<string>();
    file.agents.forEach((agent, index) => {
      if (seen.has(agent.identity))
        ctx.addIssue({ code: 'custom', path: ['agents', index, 'identity'], message: 'named twice' });
      seen.add(agent.identity);
      if (agent.maxWait > MAX_WAIT_BOUND_MS)
        ctx.addIssue({ code: 'custom', path: ['agents', index, 'maxWait'], message: 'at most 55s' });
      const names = agent.providers.map((p) => p.name);
      names.forEach((name, i) => {
        if (names.indexOf(name) !== i)
          ctx.addIssue({ code: 'custom', path: ['agents', index, 'providers', i, 'name'], message: 'named twice' });
      });
    });
    if (file.stdioIdentity !== undefined && !seen.has(file.stdioIdentity))
      ctx.addIssue({ code: 'custom', path: ['stdioIdentity'], message: 'names no agent of this file' });
  });

/** One agent as the server uses it: durations in ms, the token only as its digest. */
export interface AgentGrant {
  identity: string;
  authorisedBy: string;
  /** SHA-256 of the bearer token; absent for an identity that can only be used over stdio. */
  tokenDigest?: Buffer;
  providers: ProviderGrant[];
  mayCancel: boolean;
  results: { read: 'summary' | 'body'; maxBodyBytes: number };
  maxWaitMs: number;
}

/** The loaded policy. */
export interface AgentPolicy {
  /** Where it was read from (for messages). */
  source: string;
  stdioIdentity?: string;
  agents: AgentGrant[];
}

/** The agent policy cannot be used; `issues` names every problem at once (never a token's value). */
export class AgentPolicyError extends PolicyFileError {
  constructor(source: string, issues: PolicyIssue[]) {
    super(source, issues, 'agent policy');
  }
}

/** SHA-256 of a bearer token. */
export function tokenDigest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

function resolveToken(
  reference: z.infer<typeof tokenReferenceSchema>,
  env: Readonly<Record<string, string | undefined>>,
  readText: (file: string) => string,
): Buffer | string {
  if ('sha256' in reference) return Buffer.from(reference.sha256, 'hex');
  if ('secretEnv' in reference) {
    const value = env[reference.secretEnv]?.trim();
    return value ? tokenDigest(value) : `environment variable ${reference.secretEnv} is not set`;
  }
  try {
    const value = readText(reference.secretFile).trim();
    return value ? tokenDigest(value) : `file ${reference.secretFile} is empty`;
  } catch {
    return `file ${reference.secretFile} cannot be read`;
  }
}

/**
 * Validates a parsed policy document and resolves its token references into digests. Throws
 * {@link AgentPolicyError} naming every problem. Safe to repeat.
 */
export function agentPolicyFrom(
  document: unknown,
  source: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
  readText: (file: string) => string = (file) => readFileSync(file, 'utf8'),
): AgentPolicy {
  const parsed = agentPolicyFileSchema.safeParse(document);
  if (!parsed.success) throw new AgentPolicyError(source, policyIssues(parsed.error.issues));
  const issues: PolicyIssue[] = [];
  const agents = parsed.data.agents.map((agent, index): AgentGrant => {
    const resolved = agent.token === undefined ? undefined : resolveToken(agent.token, env, readText);
    if (typeof resolved === 'string') issues.push({ path: `agents.${index}.token`, message: resolved });
    return {
      identity: agent.identity,
      authorisedBy: agent.authorisedBy ?? parsed.data.authorisedBy,
      ...(resolved instanceof Buffer ? { tokenDigest: resolved } : {}),
      providers: agent.providers.map(({ maxCreateDeadline, maxResultDeadline, ...rest }) => ({
        ...rest,
        maxCreateDeadlineMs: maxCreateDeadline,
        maxResultDeadlineMs: maxResultDeadline,
      })),
      mayCancel: agent.mayCancel,
      results: agent.results,
      maxWaitMs: agent.maxWait,
    };
  });
  agents.forEach((agent, index) => {
    const twin = agents.findIndex((other) => other.tokenDigest && agent.tokenDigest?.equals(other.tokenDigest));
    if (agent.tokenDigest && twin !== index)
      issues.push({ path: `agents.${index}.token`, message: `the same token as agents.${twin}` });
  });
  if (issues.length > 0) throw new AgentPolicyError(source, issues);
  return {
    source,
    ...(parsed.data.stdioIdentity !== undefined ? { stdioIdentity: parsed.data.stdioIdentity } : {}),
    agents,
  };
}

/** Reads a policy file (`.json`, else YAML) and validates it ({@link agentPolicyFrom}). */
export function loadAgentPolicy(
  file: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
  readText: (file: string) => string = (path) => readFileSync(path, 'utf8'),
): AgentPolicy {
  let document: unknown;
  try {
    document = readPolicyDocument(file, readText);
  } catch (err) {
    throw err instanceof PolicyFileError ? new AgentPolicyError(file, err.issues) : err;
  }
  return agentPolicyFrom(document, file, env, readText);
}

/** The agent a bearer token belongs to, compared by digest in constant time; undefined for an unknown token. */
export function agentForToken(policy: AgentPolicy, token: string): AgentGrant | undefined {
  const digest = tokenDigest(token);
  return policy.agents.find((agent) => agent.tokenDigest !== undefined && timingSafeEqual(agent.tokenDigest, digest));
}

/** The agent with this identity, or undefined. */
export function agentNamed(policy: AgentPolicy, identity: string): AgentGrant | undefined {
  return policy.agents.find((agent) => sameActor(agent.identity, identity));
}
