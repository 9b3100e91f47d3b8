/**
 * The failure converter of a process with payload keys: a failure's message and stack trace travel as a payload
 * (`encodedAttributes`), which the payload codec encrypts like any other, so Temporal's database holds
 * "Encoded failure" where a failure's text would be. Reading is unchanged: every Temporal SDK restores the
 * message from `encodedAttributes` once the codec has decrypted it. Its own module because the SDK loads it by path
 * in the worker and in the workflow bundle (`failureConverterPath`); workflow-safe.
 */
import { DefaultFailureConverter } from '@temporalio/common';

/** Encodes each failure's message and stack trace as a payload. */
export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
