// Loaded with --import before a documentation block's server runs: whatever port the block listens on (the documents
// say 3000; the machine is shared), the server listens on port 0 of 127.0.0.1 and prints the port it got for the
// doc test. No port is picked beforehand and handed on, so none can be taken in between.
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const [first, second] = args;
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    args.splice(0, typeof second === 'string' ? 2 : 1, 0, '127.0.0.1');
  } else if (first !== null && typeof first === 'object' && 'port' in first) {
    args[0] = { ...first, port: 0, host: '127.0.0.1' };
  }
  this.once('listening', () => console.log(`doc-test listening on ${this.address().port}`));
  return listen.apply(this, args);
};
