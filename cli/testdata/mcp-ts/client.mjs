// Drives `vigil mcp` with the official TypeScript SDK client; cli/mcp_ts_test.go
// runs it and checks what it prints (one JSON object on stdout).
// usage: node client.mjs stdio VIGIL_BIN HOME TASK_ID LEASE
//        node client.mjs http URL TOKEN HOME TASK_ID LEASE
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, ...rest] = process.argv.slice(2);
let transport, home, taskId, lease;
if (mode === "stdio") {
  const [bin, h, id, l] = rest;
  [home, taskId, lease] = [h, id, l];
  transport = new StdioClientTransport({ command: bin, args: ["--home", home, "mcp"], stderr: "inherit" });
} else {
  const [url, token, h, id, l] = rest;
  [home, taskId, lease] = [h, id, l];
  transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
}

const client = new Client({ name: "ts-agent", version: "1.0.0" });
await client.connect(transport);
const out = {};
out.tools = (await client.listTools()).tools.map((t) => t.name).sort();
const search = await client.callTool({ name: "Search", arguments: { pattern: "needle", path: home } });
out.search = { isError: search.isError ?? false, count: search.structuredContent?.count, text: search.content[0]?.text };
const mem = await client.callTool({ name: "search_memory", arguments: { query: "boiler" } });
out.search_memory = { isError: mem.isError ?? false, text: mem.content[0]?.text };
let progress = 0;
const play = await client.callTool(
  {
    name: "media_play",
    arguments: { task_id: taskId, lease, media_uri: "/media/song.mp3", target_device: "living-room", wait_seconds: 30 },
  },
  undefined,
  {
    onprogress: () => {
      // the test decides once the call waits: tell it on stderr
      if (progress++ === 0) process.stderr.write("media_play: waiting\n");
    },
    timeout: 120000,
  },
);
out.media_play = { isError: play.isError ?? false, result: play.structuredContent, progress };
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
