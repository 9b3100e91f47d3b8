/** How the worker authenticates to the provider: a scheme and where its secret lives, never the secret (T4). */
import { z } from 'zod';
import { exactlyOneSecret, headerNameSchema, secretReference } from './common';

/** How the worker authenticates to the provider; resolved inside the worker, sent only to `baseUrl`'s origin. */
export const credentialSchema = z.discriminatedUnion('scheme', [
  z.strictObject({ scheme: z.literal('bearer'), ...secretReference }).superRefine(exactlyOneSecret),
  z
    .strictObject({ scheme: z.literal('header'), headerName: headerNameSchema, ...secretReference })
    .superRefine(exactlyOneSecret),
  z.strictObject({ scheme: z.literal('none') }),
]);
/** A credential reference. */
export type CredentialReference = z.infer<typeof credentialSchema>;
