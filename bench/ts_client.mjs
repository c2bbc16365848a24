// One server driven by the TypeScript SDK's client, the client Node-based hosts use.
//
// The Python SDK's client spends more CPU per call than either server and, with 64 calls in
// flight, runs a core flat out: through it, the rate is the client's. This client costs a
// fraction of that, so the rates and latencies it sees are the server's. It imports the SDK the
// reference server installs beside itself (bench/.ref), so nothing more is downloaded.
//
// node bench/ts_client.mjs SDK_DIR '["command", "arg", ...]' '["/path/a", ...]'
// prints one JSON object: per-call seconds, calls per second in flight, the server's CPU per
// call (user + system, its process and its children, from /proc) and the client's share of a core.

import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [sdk, command, paths] = [process.argv[2], JSON.parse(process.argv[3]), JSON.parse(process.argv[4])];
const { Client } = await import(pathToFileURL(`${sdk}/dist/esm/client/index.js`));
const { StdioClientTransport } = await import(pathToFileURL(`${sdk}/dist/esm/client/stdio.js`));

const SEQUENTIAL = 500, IN_FLIGHT = 64, CALLS_IN_FLIGHT = 2560, WARM_UP = 300;
const TICKS = 100; // USER_HZ: /proc's unit of CPU time

const transport = new StdioClientTransport({ command: command[0], args: command.slice(1), stderr: "ignore", env: process.env });
const client = new Client({ name: "bench", version: "0" });
await client.connect(transport);
await client.listTools();

function serverCpu() {
  let ticks = 0;
  const pid = transport.pid;
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").split(" ").filter(Boolean);
  for (const p of [pid, ...children]) {
    const fields = readFileSync(`/proc/${p}/stat`, "utf8").split(") ")[1].split(" ");
    ticks += Number(fields[11]) + Number(fields[12]); // utime, stime
  }
  return ticks / TICKS;
}

async function calls(tool, n, inFlight) {
  let next = 0;
  async function caller() {
    while (next < n) {
      const result = await client.callTool({ name: tool, arguments: { path: paths[next++ % paths.length] } });
      if (result.isError) throw new Error(`${tool} failed: ${JSON.stringify(result.content).slice(0, 300)}`);
    }
  }
  const start = performance.now(), cpu = process.cpuUsage(), server = serverCpu();
  await Promise.all(Array.from({ length: inFlight }, caller));
  const seconds = (performance.now() - start) / 1000, used = process.cpuUsage(cpu);
  return { seconds, serverCpu: (serverCpu() - server) / n, clientBusy: (used.user + used.system) / 1e6 / seconds };
}

const out = {};
for (const tool of ["get_file_info", "read_file"]) {
  await calls(tool, WARM_UP, IN_FLIGHT);
  const one = await calls(tool, SEQUENTIAL, 1);
  const many = await calls(tool, CALLS_IN_FLIGHT, IN_FLIGHT);
  out[tool] = { perCall: one.seconds / SEQUENTIAL, serverCpu: one.serverCpu, rate: CALLS_IN_FLIGHT / many.seconds, rateServerCpu: many.serverCpu, clientBusy: many.clientBusy };
}
await client.close();
console.log(JSON.stringify(out));
