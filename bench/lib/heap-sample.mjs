// Preloaded into Verdict's process by `bench:soak --node-args '--import ./bench/lib/heap-sample.mjs'`.
// V8's sampling heap profiler, started after warm-up, with the objects later collected kept in the
// profile: the sites that fill the old generation with garbage are the ones whose samples are
// mostly collected by major GCs. Writes a .heapprofile (Chrome DevTools' format) that
// `npm run bench:heap-sites` reads.
import fs from 'node:fs';
import inspector from 'node:inspector';
import path from 'node:path';
import { isMainThread } from 'node:worker_threads';

const startAfterS = Number(process.env.VERDICT_HEAP_SAMPLE_AFTER_S ?? 60);
const sampleForS = Number(process.env.VERDICT_HEAP_SAMPLE_FOR_S ?? 300);
const outDir = process.env.VERDICT_HEAP_SAMPLE_DIR ?? '/tmp';
const keepCollected = process.env.VERDICT_HEAP_SAMPLE_COLLECTED !== '0';
const intervalBytes = Number(process.env.VERDICT_HEAP_SAMPLE_INTERVAL ?? 32768);

const session = new inspector.Session();
session.connect();

function post(method, params) {
  return new Promise((resolve, reject) => session.post(method, params, (err, result) => (err ? reject(err) : resolve(result))));
}

async function sample() {
  await post('HeapProfiler.enable');
  await post('HeapProfiler.startSampling', {
    samplingInterval: intervalBytes,
    includeObjectsCollectedByMajorGC: keepCollected,
    includeObjectsCollectedByMinorGC: false,
  });
  process.stderr.write(`[heap-sample] sampling for ${sampleForS} s (collected by major GC kept: ${keepCollected})\n`);
  await new Promise((resolve) => setTimeout(resolve, sampleForS * 1000).unref());
  const { profile } = await post('HeapProfiler.stopSampling');
  const file = path.join(outDir, `verdict-${process.pid}-${keepCollected ? 'collected' : 'live'}.heapprofile`);
  fs.writeFileSync(file, JSON.stringify(profile));
  process.stderr.write(`[heap-sample] wrote ${file}\n`);
}

// Worker threads inherit the preload; only the main thread serves requests, so only its heap is sampled.
if (isMainThread)
  setTimeout(() => {
    sample().catch((err) => process.stderr.write(`[heap-sample] failed: ${err.message}\n`));
  }, startAfterS * 1000).unref();
