/**
 * How the worker authenticates to the provider: a scheme and where its secrets live, never a secret (T4). Each
 * scheme is data the worker turns into a request authoriser (`adapters/auth/`); every secret is named by
 * reference (`secretEnv` or `secretFile`) and read at the moment of each request.
 */
import { z } from 'zod';
import { absoluteUrlSchema, exactlyOneSecret, headerNameSchema, secretReference } from './common';

const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;
const envName = (example: string) =>
  z.string().max(200).regex(ENV_NAME, `an environment variable name such as ${example}`);
const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);

/** An OAuth2 token endpoint: https, or http on a loopback host only; no user information or fragment. */
const tokenUrlSchema = absoluteUrlSchema((url, ctx) => {
  const loopback = LOOPBACK_HOSTS.has(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback))
    ctx.addIssue({
      code: 'custom',
      message: 'must be https: (http: only on a loopback host: localhost, 127.0.0.1, [::1])',
    });
  if (url.username !== '' || url.password !== '')
    ctx.addIssue({ code: 'custom', message: 'must not carry credentials (name the client secret by reference)' });
  if (url.hash !== '') ctx.addIssue({ code: 'custom', message: 'must not carry a fragment' });
});

/** Exactly one of a literal value and the environment variable holding it (`username` / `usernameEnv`). */
function exactlyOneOf(literal: string, env: string) {
  return (value: Record<string, unknown>, ctx: z.RefinementCtx): void => {
    if ((value[literal] === undefined) === (value[env] === undefined))
      ctx.addIssue({ code: 'custom', path: [literal], message: `give exactly one of ${literal} or ${env}` });
  };
}

const bearerSchema = z.strictObject({ scheme: z.literal('bearer'), ...secretReference }).superRefine(exactlyOneSecret);

const headerSchema = z
  .strictObject({ scheme: z.literal('header'), headerName: headerNameSchema, ...secretReference })
  .superRefine(exactlyOneSecret);

/** RFC 7617: a user-id has no colon. */
const basicSchema = z
  .strictObject({
    scheme: z.literal('basic'),
    username: z
      .string()
      .min(1)
      .max(200)
      .regex(/^[^:\p{Cc}]+$/u, 'a user name has no ":" and no control character (RFC 7617)')
      .optional(),
    usernameEnv: envName('REPORTS_USER').optional(),
    ...secretReference,
  })
  .superRefine(exactlyOneSecret)
  .superRefine(exactlyOneOf('username', 'usernameEnv'));

const querySchema = z
  .strictObject({
    scheme: z.literal('query'),
    parameter: z.string().regex(/^[A-Za-z0-9._~-]{1,100}$/, 'a query parameter name such as api_key'),
    ...secretReference,
  })
  .superRefine(exactlyOneSecret);

const SCOPE = /^[\x21\x23-\x5b\x5d-\x7e]{1,200}$/;
const oauth2Schema = z
  .strictObject({
    scheme: z.literal('oauth2-client-credentials'),
    tokenUrl: tokenUrlSchema,
    clientId: z
      .string()
      .min(1)
      .max(500)
      .regex(/^[\x20-\x7e]+$/, 'printable ASCII')
      .optional(),
    clientIdEnv: envName('REPORTS_CLIENT_ID').optional(),
    ...secretReference,
    scopes: z
      .array(z.string().regex(SCOPE, 'a scope is printable ASCII without spaces, quotes or "\\"'))
      .max(50)
      .optional(),
    audience: z
      .string()
      .min(1)
      .max(500)
      .regex(/^[\x20-\x7e]+$/, 'printable ASCII')
      .optional(),
    clientAuthentication: z.enum(['basic', 'body']).default('basic'),
  })
  .superRefine(exactlyOneSecret)
  .superRefine(exactlyOneOf('clientId', 'clientIdEnv'));

const awsSigV4Schema = z.strictObject({
  scheme: z.literal('aws-sigv4'),
  region: z.string().regex(/^[a-z0-9][a-z0-9-]{0,49}$/, 'an AWS region such as us-east-1'),
  service: z.string().regex(/^[a-z0-9][a-z0-9.-]{0,63}$/, 'an AWS signing name such as textract'),
  profile: z
    .string()
    .regex(/^[A-Za-z0-9_.+@=,/-]{1,128}$/, 'a profile name of the shared AWS config and credentials files')
    .optional(),
});

/** How the worker authenticates to the provider; resolved inside the worker, sent only to `baseUrl`'s origin. */
export const credentialSchema = z.discriminatedUnion('scheme', [
  bearerSchema,
  headerSchema,
  basicSchema,
  querySchema,
  oauth2Schema,
  awsSigV4Schema,
  z.strictObject({ scheme: z.literal('none') }),
]);
/** A credential reference. */
export type CredentialReference = z.infer<typeof credentialSchema>;
