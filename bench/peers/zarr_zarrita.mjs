// bench/zarr's zarrita side: node zarr_zarrita.mjs NODE_MODULES PATH REPEATS
// reads the whole array with zarr.get and prints the bench line.
const [modules, path, repeats] = process.argv.slice(2);
const zarr = await import(`${modules}/zarrita/dist/src/index.js`);
const FS = (await import(`${modules}/@zarrita/storage/dist/src/fs.js`)).default;
const times = [];
let sum = 0n;
for (let r = 0; r < Number(repeats); ++r) {
  const t0 = performance.now();
  const a = await zarr.open(zarr.root(new FS(path)), {kind: 'array'});
  const out = await zarr.get(a);
  times.push((performance.now() - t0) / 1000);
  let s = 0;
  for (let i = 0; i < out.data.length; ++i) s += out.data[i];
  sum = BigInt(s);
}
times.sort((a, b) => a - b);
const name = path.replace(/\/$/, '').split('/').pop();
console.log(`zarrita case=${name} workers=1 best=${times[0].toFixed(4)} median=${times[Math.floor(times.length / 2)].toFixed(4)} sum=${sum}`);
