// Preloaded with `node --import` by the startup benchmark: the process exits the moment its first
// server is listening, so hyperfine's wall time is spawn → listening and /usr/bin/time's maximum
// RSS is the RSS at listen. Loaded the same way for the service and the bare baseline.
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  this.once('listening', () => process.exit(0));
  return listen.apply(this, args);
};
