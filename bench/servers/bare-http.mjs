// The baselines: a bare node:http server doing the least a server can do, started beside the
// project in the same run so every figure can be read as a ratio that survives machine drift.
//   GET  → 200 with a JSON body of BARE_BODY_BYTES bytes (the size of the endpoint it stands for)
//   POST → reads the whole body, then 200 with BARE_POST_RESPONSE (the "POST sink")
// HTTPS when BARE_TLS_CERT and BARE_TLS_KEY name PEM files (the webhook receiver). Prints
// "listening <port>" once it accepts connections. Plain JavaScript on purpose: its startup time
// is a baseline too, and must not include type stripping.
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';

const size = Number(process.env.BARE_BODY_BYTES ?? 100);
// A JSON string value padded to the exact byte size asked for.
const body = Buffer.from(JSON.stringify({ pad: 'x'.repeat(Math.max(0, size - 10)) }));
const postResponse = Buffer.from(process.env.BARE_POST_RESPONSE ?? '');
const getHeaders = { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length };
const postHeaders = { 'content-type': 'text/plain', 'content-length': postResponse.length };
let received = 0;
// Latency benchmarks: the arrival time of each webhook event id (a clock shared by processes).
const arrivals = process.env.BARE_RECORD_EVENTS === '1' ? new Map() : null;

function handle(req, res) {
  if (req.method === 'POST') {
    req.on('data', () => {});
    req.on('end', () => {
      received++;
      if (arrivals) {
        const id = req.headers['x-service-event-id'];
        if (id && !arrivals.has(id)) arrivals.set(id, performance.timeOrigin + performance.now());
      }
      res.writeHead(200, postHeaders);
      res.end(postResponse);
    });
    return;
  }
  if (req.url === '/__events') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(arrivals ? Object.fromEntries(arrivals) : {}));
    arrivals?.clear();
    return;
  }
  if (req.url === '/__count') {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(String(received));
    return;
  }
  res.writeHead(200, getHeaders);
  res.end(body);
}

const tls = process.env.BARE_TLS_CERT && process.env.BARE_TLS_KEY;
const server = tls
  ? https.createServer(
      { cert: fs.readFileSync(process.env.BARE_TLS_CERT), key: fs.readFileSync(process.env.BARE_TLS_KEY) },
      handle,
    )
  : http.createServer(handle);
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
