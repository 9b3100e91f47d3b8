/**
 * `asyncjob keys new --for WHO [--out FILE]`: a new Ed25519 key pair for a decider to sign decisions with (D3).
 * The secret key goes to a file only its owner can read (the decider's file in the keys directory, or FILE),
 * never over an existing one; what is printed is where it went, the public key, and the lines of the policy
 * file's `deciders` section that let the workers check signatures made with it. The secret is never printed.
 */
import path from 'node:path';
import { DeciderKey, deciderKeyFile, policyKeyLines } from '../policy/decider-keys';
import { type Cmd, type CommandContext, emit, say } from './command-context';
import { EXIT, type ExitCode } from './exit-codes';

/** `keys new`: see the module comment. Not safe to repeat: each run makes another key (a second is refused). */
export async function keysCommand(ctx: CommandContext, cmd: Cmd<'keys'>): Promise<ExitCode> {
  const env = ctx.deps.env ?? process.env;
  const file = cmd.out !== undefined ? path.resolve(cmd.out) : deciderKeyFile(env, cmd.decider);
  const key = DeciderKey.generate(cmd.decider);
  await key.write(file);
  const lines = policyKeyLines(key);
  if (cmd.json) {
    emit(ctx, {
      schema: 'asyncjob.keys/v1',
      file,
      for: key.decider,
      keyId: key.keyId,
      policy: `${lines.join('\n')}\n`,
    });
  } else {
    say(
      ctx,
      `wrote ${file}: the secret key of ${key.decider} (mode 0600; never printed)`,
      `public key: ${key.keyId}`,
      `to let ${key.decider} sign, list it in the deciders section of the policy file (ASYNCJOB_DECIDER_POLICY), beside any key already there, then restart the workers:`,
      ...lines,
    );
  }
  return EXIT.ok;
}
