/**
 * The `aws-json` preset and the AWS documents of examples/providers/ against the answers AWS's JSON protocol gives:
 * every answer read as JSON whatever its label (`format: json`), `__type`/`message` errors, throttling codes read as rate limited
 * whatever the HTTP status (H1), each document's states. Pure: answers as the HTTP layer hands them over.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import {
  interpretCreate,
  interpretStatus,
  parseProviderContract,
  type ProviderContract,
} from '../../../src/adapters/providers';
import { answer, valid } from './helpers';

const EXAMPLES = path.join(__dirname, '..', '..', '..', 'examples', 'providers');

function example(name: string): ProviderContract {
  const file = path.join(EXAMPLES, `${name}.yaml`);
  return parseProviderContract(parseYaml(readFileSync(file, 'utf8')) as Record<string, unknown>, file, {});
}

const transcribe = example('amazon-transcribe');
const textract = example('amazon-textract');
const stepFunctions = example('aws-step-functions');

/** An AWS JSON answer as the HTTP layer hands it over (parsed: the preset reads every answer as JSON). */
function aws(status: number, body: unknown, contentType = 'application/x-amz-json-1.1') {
  return answer(status, { json: body, headers: { 'content-type': contentType } });
}

describe('aws-json: what every document gets from the preset', () => {
  it.each([
    ['amazon-transcribe', transcribe],
    ['amazon-textract', textract],
    ['aws-step-functions', stepFunctions],
  ])('%s: POST / for create and status, SigV4, JSON answers whatever their label', (_name, contract) => {
    expect(contract.create).toMatchObject({ method: 'POST', path: '/', format: 'json', acceptedStatuses: [200] });
    expect(contract.status).toMatchObject({ method: 'POST', path: '/', format: 'json' });
    expect(contract.credential.scheme).toBe('aws-sigv4');
    expect(contract.providerError?.rateLimitedCodes).toContain('ThrottlingException');
  });
});

describe('aws-json: throttling is "not now", whatever the HTTP status (H1)', () => {
  it.each([['ThrottlingException'], ['TooManyRequestsException'], ['com.amazonaws.transcribe#LimitExceededException']])(
    'H1: a 400 %s answer to a status read is rate limited, like a 429',
    (type) => {
      const o = valid(interpretStatus(transcribe, aws(400, { __type: type, message: 'Rate exceeded' })));
      expect(o.signal).toBe('rate_limited');
      expect(o.providerError).toMatchObject({ code: type, message: 'Rate exceeded' });
    },
  );

  it('H1: a 400 ThrottlingException answer to a start is rate limited too (nothing was started)', () => {
    const o = valid(interpretCreate(transcribe, aws(400, { __type: 'ThrottlingException', message: 'Rate exceeded' })));
    expect(o.signal).toBe('rate_limited');
  });

  it('a 400 BadRequestException is a refusal, never rate limited', () => {
    const o = valid(
      interpretCreate(transcribe, aws(400, { __type: 'BadRequestException', message: 'no such vocabulary' })),
    );
    expect(o.signal).toBe('client_error');
    expect(o.providerError).toMatchObject({ code: 'BadRequestException', message: 'no such vocabulary' });
  });
});

describe('the AWS documents read their services', () => {
  it('Transcribe: the job name is the job ID; IN_PROGRESS is pending, COMPLETED succeeded', () => {
    const created = valid(
      interpretCreate(transcribe, aws(200, { TranscriptionJob: { TranscriptionJobName: 'tok-1' } }, 'text')),
    );
    expect(created.remoteJobId).toBe('tok-1');
    const running = valid(
      interpretStatus(transcribe, aws(200, { TranscriptionJob: { TranscriptionJobStatus: 'IN_PROGRESS' } }, 'text')),
    );
    expect(running.category).toBe('pending');
    const done = valid(
      interpretStatus(
        transcribe,
        aws(200, { TranscriptionJob: { TranscriptionJobStatus: 'COMPLETED', Transcript: { TranscriptFileUri: 'u' } } }),
      ),
    );
    expect(done.category).toBe('success');
  });

  it('Transcribe: FAILED is a failure with its FailureReason', () => {
    const o = valid(
      interpretStatus(
        transcribe,
        aws(200, { TranscriptionJob: { TranscriptionJobStatus: 'FAILED', FailureReason: 'unsupported media' } }),
      ),
    );
    expect(o.category).toBe('failure');
    expect(o.providerError?.message).toBe('unsupported media');
  });

  it('Textract: SUCCEEDED succeeded, PARTIAL_SUCCESS is not a success (some pages were not read)', () => {
    expect(valid(interpretStatus(textract, aws(200, { JobStatus: 'SUCCEEDED', Blocks: [] }))).category).toBe('success');
    expect(valid(interpretStatus(textract, aws(200, { JobStatus: 'PARTIAL_SUCCESS' }))).category).toBe('failure');
  });

  it('Step Functions: RUNNING pending, FAILED a failure with its error and cause (JSON 1.0)', () => {
    const json10 = 'application/x-amz-json-1.0';
    expect(valid(interpretStatus(stepFunctions, aws(200, { status: 'RUNNING' }, json10))).category).toBe('pending');
    const failed = valid(
      interpretStatus(
        stepFunctions,
        aws(200, { status: 'FAILED', error: 'Media.Unreadable', cause: 'not a media file' }, json10),
      ),
    );
    expect(failed.category).toBe('failure');
    expect(failed.providerError).toMatchObject({ code: 'Media.Unreadable', message: 'not a media file' });
  });
});
