/**
 * `asyncjob codec-server [--port N] [--host H]`: the codec endpoint the Temporal Web UI decodes payloads through,
 * over the payload keys of ASYNCJOB_PAYLOAD_KEYS (`src/codec/codec-server.ts`). Its token is read from
 * ASYNCJOB_CODEC_SERVER_TOKEN's reference, the pages allowed from ASYNCJOB_CODEC_SERVER_ORIGINS. Prints where it
 * listens and serves until SIGINT or SIGTERM. Exit 2 for a bad environment (no keys, an unreadable key or token, a
 * non-loopback host or the origin `*` without a token).
 */
import { z } from 'zod';
import { startCodecServer } from '../codec/codec-server';
import { loadPayloadCodecs, readReference } from '../codec/payload-keys';
import { ConfigError } from '../config';
import { codecServerSettings, parseSecretReference } from '../config/payloads';
import { type Cmd, type CommandContext, emit, say } from './command-context';
import { EXIT, type ExitCode } from './exit-codes';

/** The server's settings from the environment, every problem at once (ConfigError). */
async function codecServerEnvironment(env: NodeJS.ProcessEnv) {
  const parsed = z.object(codecServerSettings).safeParse(env);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  const loaded = await loadPayloadCodecs(env);
  if (loaded.payloadCodecs.length === 0)
    throw new ConfigError(['ASYNCJOB_PAYLOAD_KEYS: the codec server needs the payload keys the workers use']);
  const reference = parseSecretReference(parsed.data.ASYNCJOB_CODEC_SERVER_TOKEN ?? '');
  let token: string | undefined;
  if (reference !== undefined) {
    try {
      token = await readReference(reference, env);
    } catch (err) {
      throw new ConfigError([`ASYNCJOB_CODEC_SERVER_TOKEN: ${(err as Error).message}`]);
    }
  }
  const origins = parsed.data.ASYNCJOB_CODEC_SERVER_ORIGINS.split(',')
    .map((origin) => origin.trim())
    .filter(Boolean);
  return { loaded, token, origins };
}

/** Resolves on the first SIGINT or SIGTERM. */
function stopRequested(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

/** `codec-server`: see the module comment. Serves until stopped; exit 0. */
export async function codecServerCommand(ctx: CommandContext, cmd: Cmd<'codec-server'>): Promise<ExitCode> {
  const env = (ctx.deps.env ?? process.env) as NodeJS.ProcessEnv;
  const { loaded, token, origins } = await codecServerEnvironment(env);
  const server = await startCodecServer({
    codec: loaded.payloadCodecs[0]!,
    host: cmd.host,
    port: cmd.port,
    origins,
    ...(token !== undefined ? { token } : {}),
  });
  const stopped = stopRequested();
  if (cmd.json)
    emit(ctx, {
      schema: 'asyncjob.codec-server/v1',
      url: server.url,
      encryptingKeyId: loaded.encryptingKeyId ?? null,
      origins,
      token: token !== undefined,
    });
  else
    say(
      ctx,
      `asyncjob codec-server: ${server.url} (POST /decode, /encode; ${loaded.encryptingKeyId !== undefined ? `encrypting key ${loaded.encryptingKeyId}` : 'writing plain text'}; ${token !== undefined ? 'bearer token required' : 'no token, loopback only'}; Web UI origins ${origins.join(', ')})`,
    );
  await stopped;
  await server.stop();
  return EXIT.ok;
}
