/** How a job is cancelled at the provider (X1). */
import { z } from 'zod';
import { httpStatusListSchema } from './common';
import { pathTemplateSchema, requestTemplateFields } from './request';

/** How to cancel a job (X1); absent when the provider offers no cancel. */
export const cancelSchema = z.strictObject({
  method: z.enum(['POST', 'DELETE', 'PUT', 'PATCH']),
  /** The cancel endpoint; without `{jobId}` when jobs are known only by their poll URL. */
  path: pathTemplateSchema,
  /** The query, headers and body of the cancel request. */
  ...requestTemplateFields,
  /** Whether repeating the cancel call is harmless (X3 still sends it once). */
  idempotent: z.boolean(),
  acceptedStatuses: httpStatusListSchema.default([200, 202, 204]),
});
