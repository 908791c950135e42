// ONNX Runtime peer for bench/peers/run_peers.py: times session creation and
// inference of one ONNX model on the CPU with npm's onnxruntime-node, checks
// its output against PyTorch's, and prints one JSON object.
//
//   NODE_PATH=DIR/node_modules node bench/peers/ort_bench.js --model M.onnx --input M.input.npy
//       [--expected M.expected.npy] [--threads 1] [--inter-threads 1] [--warmup 5] [--runs 50] [--output OUT.f32]
// (--input: one .npy per model input, comma-separated, in the model's order;
// --inter-threads N > 1: ONNX Runtime's parallel executor with N inter-op
// threads; --output: the first output's float32 values, raw, little-endian)
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

function parseArgs(argv) {
  const args = { threads: 1, 'inter-threads': 1, warmup: 5, runs: 50 };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    const numbers = ['threads', 'inter-threads', 'warmup', 'runs'];
    if (!['model', 'input', 'expected', 'output', ...numbers].includes(key) || i + 1 >= argv.length)
      throw new Error(`unknown or incomplete option ${argv[i]}`);
    args[key] = numbers.includes(key) ? Number(argv[i + 1]) : argv[i + 1];
  }
  if (!args.model || !args.input) throw new Error('--model and --input are required');
  return args;
}

// The smallest .npy reader that covers the suite: little-endian float32 in C
// order, format versions 1 to 3.
function readNpy(path) {
  const bytes = fs.readFileSync(path);
  if (bytes.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${path}: not a .npy file`);
  const major = bytes[6];
  const headerLength = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
  const dataStart = (major === 1 ? 10 : 12) + headerLength;
  const header = bytes.toString('latin1', major === 1 ? 10 : 12, dataStart);
  if (!/'descr':\s*'<f4'/.test(header) || !/'fortran_order':\s*False/.test(header))
    throw new Error(`${path}: only little-endian float32 in C order is supported (header ${header.trim()})`);
  const shape = header.match(/'shape':\s*\(([^)]*)\)/)[1].split(',').filter((s) => s.trim()).map(Number);
  const count = shape.reduce((a, b) => a * b, 1);
  // Copied out: the data need not start 4-byte aligned inside the file's buffer.
  const data = new Float32Array(count);
  Buffer.from(data.buffer).set(bytes.subarray(dataStart, dataStart + 4 * count));
  return { shape, data };
}

// Same definitions as `switchyard run`: median of the sorted times, p90 by
// nearest rank (always a measured run).
function summarise(ms) {
  const s = [...ms].sort((a, b) => a - b);
  const n = s.length;
  const median = n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  return { median, min: s[0], p90: s[Math.ceil(0.9 * n) - 1] };
}

function maxAbsError(actual, expected) {
  let error = 0, scale = 0;
  for (let i = 0; i < expected.length; ++i) {
    error = Math.max(error, Math.abs(actual[i] - expected[i]));
    scale = Math.max(scale, Math.abs(expected[i]));
  }
  return { max_abs_error: error, relative_error: scale > 0 ? error / scale : error };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const inputs = args.input.split(',').map(readNpy);

  const createStart = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(args.model, {
    graphOptimizationLevel: 'all',
    executionProviders: ['cpu'],
    intraOpNumThreads: args.threads,
    interOpNumThreads: args['inter-threads'],
    executionMode: args['inter-threads'] > 1 ? 'parallel' : 'sequential',
  });
  const sessionSeconds = Number(process.hrtime.bigint() - createStart) / 1e9;

  // The input tensor is made once, as `switchyard run` loads its inputs once.
  if (inputs.length !== session.inputNames.length)
    throw new Error(`the model has ${session.inputNames.length} inputs, --input gives ${inputs.length}`);
  const feeds = {};
  inputs.forEach((input, i) => { feeds[session.inputNames[i]] = new ort.Tensor('float32', input.data, input.shape); });
  let outputs;
  for (let i = 0; i < args.warmup; ++i) outputs = await session.run(feeds);
  const times = [];
  for (let i = 0; i < args.runs; ++i) {
    const start = process.hrtime.bigint();
    outputs = await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }

  const result = {
    peer: 'onnxruntime-node',
    version: require('onnxruntime-node/package.json').version,
    threads: args.threads,
    inter_threads: args['inter-threads'],
    warmup: args.warmup,
    runs: args.runs,
    session_s: sessionSeconds,
    latency_ms: summarise(times),
    peak_rss_mib: process.resourceUsage().maxRSS / 1024,  // maxRSS is in KiB
  };
  if (args.output) {
    const data = outputs[session.outputNames[0]].data;
    fs.writeFileSync(args.output, Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  }
  if (args.expected) {
    const expected = readNpy(args.expected);
    Object.assign(result, maxAbsError(outputs[session.outputNames[0]].data, expected.data));
  }
  console.log(JSON.stringify(result));
}

main().catch((e) => {
  console.error(`ort_bench: ${e.message}`);
  process.exit(1);
});
