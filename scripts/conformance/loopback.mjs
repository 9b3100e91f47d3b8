// Preloaded into the conformance test server (`node --import`): a server told to listen on a port alone
// listens on 127.0.0.1 only, never on every interface.
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function listenOnLoopback(...args) {
  if (typeof args[0] === 'number' && (args.length === 1 || typeof args[1] === 'function'))
    args.splice(1, 0, '127.0.0.1');
  return listen.apply(this, args);
};
