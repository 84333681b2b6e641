// relaxc's browser runtime: run a webgpu artifact (relaxc compile --target webgpu) in a page.
//
//   import {createRelax} from "./relax.js";
//   const relax = await createRelax();                  // a WebGPU device, the wasm runtime
//   const model = await relax.load(bytes);              // an ArrayBuffer / Uint8Array artifact
//   const [y] = await model.run([{data: f32, shape: [1, 3, 48, 192]}]);  // or {name: {...}}
//   y.data, y.shape, y.dtype, y.name
//
// Errors are exceptions whose message is the text relax-run prints after "error: " (a wrong
// input shape or dtype, a corrupt artifact, a limit the adapter lacks, no WebGPU). The model's
// kernels run on the GPU; its tensors stay there until run() reads the outputs back.
import createRelaxRuntime from "./relax_runtime.js";
import {KernelLinker, RelaxGpu, readSections} from "./gpu.js";

// dtype name -> [DLPack code, bits, TypedArray]
const DTYPES = {
  float32: [2, 32, Float32Array], float64: [2, 64, Float64Array], float16: [2, 16, Uint16Array],
  int8: [0, 8, Int8Array], int16: [0, 16, Int16Array], int32: [0, 32, Int32Array],
  int64: [0, 64, BigInt64Array], uint8: [1, 8, Uint8Array], uint16: [1, 16, Uint16Array],
  uint32: [1, 32, Uint32Array], uint64: [1, 64, BigUint64Array], bool: [1, 1, Uint8Array],
  bfloat16: [4, 16, Uint16Array],
};

export class RelaxError extends Error {}

export async function createRelax(options = {}) {
  let device = options.device;
  if (!device) {
    if (!globalThis.navigator || !navigator.gpu)
      throw new RelaxError("WebGPU is not available in this browser (navigator.gpu is missing)");
    const adapter = await navigator.gpu.requestAdapter();
    if (!adapter) throw new RelaxError("no WebGPU adapter");
    device = await adapter.requestDevice();  // WebGPU's default limits: what kernels are built for
  }
  const M = await createRelaxRuntime(options.runtime || {});
  M.relaxGpu = new RelaxGpu(M, device);
  M.relaxKernels = new KernelLinker(M);
  return new Relax(M, device);
}

class Relax {
  constructor(M, device) {
    this.M = M;
    this.device = device;
    this.count = 0;
    this.lost = null;
    device.lost.then(info => { this.lost = info.message || "the device was lost"; });
  }
  error() { return new RelaxError(this.M.UTF8ToString(this.M._RelaxGetLastError())); }

  async load(source, name = "model.so") {
    const bytes = source instanceof Uint8Array ? source : new Uint8Array(source);
    let sections;
    try {
      sections = readSections(bytes);
    } catch (e) {
      throw new RelaxError(`artifact '${name}' is ${e.message}`);
    }
    const wasm = sections.get("wasm");
    if (!wasm) {
      throw new RelaxError(sections.has("elf")
          ? `artifact '${name}' holds code for a CPU, not the browser: compile it with --target webgpu`
          : `artifact '${name}' has no kernel module`);
    }
    const M = this.M;
    let token;
    try {
      token = await M.relaxKernels.prepare(bytes.subarray(wasm.offset, wasm.offset + wasm.size));
    } catch (e) {
      throw new RelaxError(`cannot load the kernels of artifact '${name}': ${e.message}`);
    }
    // The runtime verifies the whole file (layout, checksum, executable) from its in-memory
    // file system; the file is gone once loaded.
    const path = `/artifact-${++this.count}-${name.replace(/[^A-Za-z0-9._-]/g, "_")}`;
    let handle = 0;
    try {
      M.FS.writeFile(path, bytes);
      const p = M._malloc(M.lengthBytesUTF8(path) + 1);
      if (!p) throw new RelaxError("out of memory");
      M.stringToUTF8(path, p, M.lengthBytesUTF8(path) + 1);
      handle = this.scoped(() => M._relax_web_load(p));
      M._free(p);
    } finally {
      try { M.FS.unlink(path); } catch (e) { /* never written */ }
      M.relaxKernels.discard(token);
    }
    if (!handle) throw this.error();
    return new RelaxModel(this, handle, name);
  }

  // Runs `fn` (a synchronous runtime call) and then turns any exception into a RelaxError.
  scoped(fn) {
    try {
      return fn();
    } catch (e) {
      throw new RelaxError(typeof e === "number" ? "the runtime failed (uncaught C++ exception)" : String(e && e.message || e));
    }
  }
}

function info(M, handle, output, i) {
  const p = M._relax_web_info(handle, output, i);
  const ndim = M._relax_web_info_ndim(p);
  const shape = [], dims = [];
  for (let d = 0; d < ndim; ++d) {
    shape.push(M._relax_web_info_dim(p, d));
    const n = M._relax_web_info_dim_name(p, d);
    dims.push(n ? M.UTF8ToString(n) : null);
  }
  return {name: M.UTF8ToString(M._relax_web_info_name(p)), dtype: M.UTF8ToString(M._relax_web_info_dtype(p)),
          shape, dims};
}

class RelaxModel {
  constructor(relax, handle, name) {
    this.relax = relax;
    this.M = relax.M;
    this.handle = handle;
    this.name = name;
    const M = this.M;
    this.inputs = [], this.outputs = [];
    for (let i = 0; i < M._RelaxModuleNumInputs(handle); ++i) this.inputs.push(info(M, handle, 0, i));
    for (let i = 0; i < M._RelaxModuleNumOutputs(handle); ++i) this.outputs.push(info(M, handle, 1, i));
  }

  // inputs: an array in input order, or an object by input name; each {data: TypedArray,
  // shape: [dims]} (a TypedArray alone for a rank-1 input). Resolves to the outputs, each
  // {name, dtype, shape, data}.
  async run(inputs) {
    const M = this.M, relax = this.relax;
    if (relax.lost) throw new RelaxError(`webgpu: ${relax.lost}`);
    if (!this.handle) throw new RelaxError("the model was freed");
    const list = Array.isArray(inputs) ? inputs : this.inputs.map(i => inputs[i.name]);
    if (list.length !== this.inputs.length)
      throw new RelaxError(`expected ${this.inputs.length} inputs, got ${list.length}`);
    const allocs = [];
    const malloc = n => {
      const p = M._malloc(n);
      if (!p) throw new RelaxError(`out of memory (${n} bytes for the inputs)`);
      return p;
    };
    const tensors = malloc(4 * Math.max(1, list.length));
    const outs = M._malloc(4 * Math.max(1, this.outputs.length));
    if (!outs) { M._free(tensors); throw new RelaxError("out of memory"); }
    let rc, scopes = null;
    try {
      relax.device.pushErrorScope("out-of-memory");
      relax.device.pushErrorScope("validation");
      scopes = [];
      list.forEach((x, i) => {
        const want = this.inputs[i];
        if (x === undefined || x === null) { M.HEAPU32[(tensors >> 2) + i] = 0; return; }
        const data = ArrayBuffer.isView(x) ? x : x.data;
        const shape = ArrayBuffer.isView(x) ? [x.length] : x.shape;
        const dt = DTYPES[want.dtype];
        if (!dt) throw new RelaxError(`input '${want.name}': dtype ${want.dtype} is not supported by relax.js`);
        if (!(data instanceof dt[2]))
          throw new RelaxError(`input '${want.name}': expected ${want.dtype} data (${dt[2].name}), got ${data && data.constructor ? data.constructor.name : typeof data}`);
        if (!Array.isArray(shape)) throw new RelaxError(`input '${want.name}': no shape`);
        const count = shape.reduce((a, b) => a * b, 1);
        if (count !== data.length)
          throw new RelaxError(`input '${want.name}': shape [${shape}] has ${count} elements, the data ${data.length}`);
        const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
        const ptr = malloc(Math.max(1, bytes.length));
        allocs.push(ptr, 0);
        M.HEAPU8.set(bytes, ptr);
        const dims = malloc(8 * Math.max(1, shape.length));
        shape.forEach((d, k) => { M.HEAPF64[(dims >> 3) + k] = d; });
        const t = M._relax_web_make_tensor(ptr, dt[0], dt[1], shape.length, dims);
        M._free(dims);
        if (!t) throw new RelaxError("out of memory");
        allocs[allocs.length - 1] = t;
        M.HEAPU32[(tensors >> 2) + i] = t;
      });
      rc = relax.scoped(() => M._RelaxModuleRun(this.handle, tensors, list.length, outs, this.outputs.length));
    } finally {
      for (let i = 0; i < allocs.length; i += 2) {
        M._free(allocs[i]);
        if (allocs[i + 1]) M._relax_web_free_tensor(allocs[i + 1]);
      }
      M._free(tensors);
      if (rc === undefined) M._free(outs);  // an input was refused before the run
      // Both scopes popped at once (another run() may push its own meanwhile).
      if (scopes) scopes.push(relax.device.popErrorScope(), relax.device.popErrorScope());
    }
    const [validation, oom] = await Promise.all(scopes);
    M.relaxGpu.flush();
    if (rc !== 0) { M._free(outs); throw relax.error(); }
    const results = [];
    try {
      const err = validation || oom;
      if (err) throw new RelaxError(`webgpu: ${err.message}`);
      for (let i = 0; i < this.outputs.length; ++i) {
        const t = M.HEAPU32[(outs >> 2) + i];
        const shape = [];
        for (let d = 0; d < M._relax_web_out_ndim(t); ++d) shape.push(M._relax_web_out_dim(t, d));
        const dtype = this.outputs[i].dtype;
        const Typed = (DTYPES[dtype] || [0, 8, Uint8Array])[2];
        const count = shape.reduce((a, b) => a * b, 1);
        const nbytes = count * (dtype === "bool" ? 1 : Typed.BYTES_PER_ELEMENT);
        const addr = M._relax_web_out_data(t) >>> 0;
        const bytes = M._relax_web_out_on_device(t)
            ? await M.relaxGpu.read(addr, nbytes) : M.HEAPU8.slice(addr, addr + nbytes);
        results.push({name: this.outputs[i].name, dtype, shape,
                      data: new Typed(bytes.buffer, bytes.byteOffset, count)});
      }
      if (relax.lost) throw new RelaxError(`webgpu: ${relax.lost}`);
    } finally {
      for (let i = 0; i < this.outputs.length; ++i) M._relax_web_out_free(M.HEAPU32[(outs >> 2) + i]);
      M._free(outs);
    }
    return results;
  }

  free() {
    if (this.handle) this.M._RelaxModuleFree(this.handle);
    this.handle = 0;
  }
}
