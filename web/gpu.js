// The JS half of the browser runtime: the WebGPU device the runtime's device API calls
// (web/runtime/webgpu_device_api.cc, as Module.relaxGpu) and the linker of an artifact's wasm
// kernel module (web/runtime/wasm_loader.cc, as Module.relaxKernels). relax.js wires them up.

// Device memory lives at addresses the wasm heap never reaches: [2 GiB, 4 GiB).
const DEVICE_BASE = 0x80000000;
const DEVICE_END = 0x100000000;
const ALIGN = 256;  // minStorageBufferOffsetAlignment: every allocation and kernel view
const ceil = (n, a) => Math.ceil(n / a) * a;

// The bind group layout of a kernel with launch-table `params`: storage buffers at bindings
// 0..n-1 (every one read_write: backends/webgpu/wgsl_storage.h), the scalars' uniform struct
// after them.
export function layoutEntries(params) {
  const entries = [];
  const buffers = params.filter(p => p !== "scalar").length;
  for (let i = 0; i < buffers; ++i)
    entries.push({binding: i, visibility: GPUShaderStage.COMPUTE, buffer: {type: "storage"}});
  if (buffers < params.length)
    entries.push({binding: buffers, visibility: GPUShaderStage.COMPUTE, buffer: {type: "uniform"}});
  return entries;
}

export class RelaxGpu {
  constructor(module, device) {
    this.M = module;
    this.device = device;
    this.limits = device.limits;
    this.allocs = [];   // {addr, size, buf}, sorted by addr
    this.free_ = [];    // {addr, size} ranges to reuse
    this.top = DEVICE_BASE;
    this.kernelSets = new Map();
    this.nextHandle = 1;
    this.staging = [];           // per-launch uploads, destroyed at flush
    this.launches = 0;
  }

  // ---- memory -----------------------------------------------------------------------
  alloc(nbytes) {
    const size = Math.max(ALIGN, ceil(nbytes, ALIGN));
    if (nbytes > this.limits.maxBufferSize)
      throw new Error(`${nbytes} bytes exceed this device's maxBufferSize (${this.limits.maxBufferSize})`);
    let addr = 0;
    for (let i = 0; i < this.free_.length; ++i) {
      const r = this.free_[i];
      if (r.size >= size) {
        addr = r.addr;
        if (r.size === size) this.free_.splice(i, 1);
        else { r.addr += size; r.size -= size; }
        break;
      }
    }
    if (!addr) {
      if (this.top + size > DEVICE_END)
        throw new Error("the device address range (2 GiB) is exhausted");
      addr = this.top;
      this.top += size;
    }
    const U = GPUBufferUsage;
    const buf = this.device.createBuffer({size, usage: U.STORAGE | U.COPY_SRC | U.COPY_DST});
    const a = {addr, size, buf};
    let lo = 0, hi = this.allocs.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (this.allocs[mid].addr < addr) lo = mid + 1; else hi = mid; }
    this.allocs.splice(lo, 0, a);
    return addr;
  }
  find(addr) {
    let lo = 0, hi = this.allocs.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1, a = this.allocs[mid];
      if (addr < a.addr) hi = mid - 1;
      else if (addr >= a.addr + a.size) lo = mid + 1;
      else return a;
    }
    return null;
  }
  free(addr) {
    addr >>>= 0;  // wasm passes a u32 as a signed i32
    const a = this.find(addr);
    if (!a || a.addr !== addr) return;
    this.allocs.splice(this.allocs.indexOf(a), 1);
    // Destroyed after the queued work that may use it (WebGPU keeps a destroyed buffer's
    // contents for commands already submitted).
    a.buf.destroy();
    // Back to the free ranges, merged with its neighbours (and the top of the range lowered),
    // so the address range does not fragment across runs of different sizes.
    this.free_.push({addr: a.addr, size: a.size});
    this.free_.sort((x, y) => x.addr - y.addr);
    const merged = [];
    for (const r of this.free_) {
      const last = merged[merged.length - 1];
      if (last && last.addr + last.size === r.addr) last.size += r.size;
      else merged.push({addr: r.addr, size: r.size});
    }
    const end = merged[merged.length - 1];
    if (end && end.addr + end.size === this.top) { this.top = end.addr; merged.pop(); }
    this.free_ = merged;
  }
  holds(addr, nbytes) {
    addr >>>= 0;
    const a = this.find(addr);
    return !!a && addr + nbytes <= a.addr + a.size;
  }
  view(addr, nbytes, what) {
    const a = this.find(addr);
    if (!a || addr + nbytes > a.addr + a.size)
      throw new Error(`${what}: address 0x${addr.toString(16)} (+${nbytes} bytes) is not device memory of this runtime`);
    return {buf: a.buf, offset: addr - a.addr, alloc: a};
  }
  copy(src, dst, nbytes, srcGpu, dstGpu) {
    src >>>= 0, dst >>>= 0;
    if (nbytes === 0) return;
    const n = ceil(nbytes, 4);
    if (!srcGpu && dstGpu) {
      const v = this.view(dst, n, "copy to the device");
      if (v.offset % 4) throw new Error("copy to the device: offset not 4-byte aligned");
      const bytes = this.M.HEAPU8.slice(src, src + nbytes);
      const padded = n === nbytes ? bytes : (() => { const p = new Uint8Array(n); p.set(bytes); return p; })();
      this.device.queue.writeBuffer(v.buf, v.offset, padded);
    } else if (srcGpu && dstGpu) {
      const s = this.view(src, n, "device copy"), d = this.view(dst, n, "device copy");
      const enc = this.device.createCommandEncoder();
      enc.copyBufferToBuffer(s.buf, s.offset, d.buf, d.offset, n);
      this.device.queue.submit([enc.finish()]);
    } else {
      throw new Error("a host-to-host copy reached the webgpu device API");
    }
  }
  // Bytes [addr, addr + nbytes) of device memory, read after every queued kernel.
  async read(addr, nbytes) {
    addr >>>= 0;
    const n = Math.max(4, ceil(nbytes, 4));
    const v = this.view(addr, nbytes, "reading an output");
    const U = GPUBufferUsage;
    if (v.offset % 4) throw new Error(`reading an output: offset ${v.offset} is not 4-byte aligned`);
    const rb = this.device.createBuffer({size: n, usage: U.MAP_READ | U.COPY_DST});
    try {
      const enc = this.device.createCommandEncoder();
      enc.copyBufferToBuffer(v.buf, v.offset, rb, 0, Math.min(n, v.alloc.size - v.offset));
      this.device.queue.submit([enc.finish()]);
      await rb.mapAsync(GPUMapMode.READ);
      const out = new Uint8Array(rb.getMappedRange().slice(0, nbytes));
      rb.unmap();
      return out;
    } finally {
      rb.destroy();
    }
  }

  // ---- kernels ----------------------------------------------------------------------
  loadKernels(tableJson, ptr, size) {
    ptr >>>= 0;
    const table = JSON.parse(tableJson);
    const heap = this.M.HEAPU8;
    const decoder = new TextDecoder();
    const kernels = table.kernels.map(k => {
      if (k.binary_offset + k.binary_size > size) throw new Error(`kernel ${k.name}: binary outside the device section`);
      let end = ptr + k.binary_offset + k.binary_size;
      while (end > ptr + k.binary_offset && heap[end - 1] === 0) --end;
      return {name: k.name, params: k.params, block: k.block,
              source: decoder.decode(heap.slice(ptr + k.binary_offset, end)), pipeline: null};
    });
    const handle = this.nextHandle++;
    // Each module's resident constants (its artifact's params): host address:bytes -> GPUBuffer.
    kernels.constants = new Map();
    this.kernelSets.set(handle, kernels);
    return handle;
  }
  unloadKernels(handle) {
    const kernels = this.kernelSets.get(handle);
    if (!kernels) return;
    for (const b of kernels.constants.values()) b.destroy();
    this.kernelSets.delete(handle);
  }
  pipeline(k) {
    if (k.pipeline) return k.pipeline;
    k.layout = this.device.createBindGroupLayout({entries: layoutEntries(k.params)});
    const module = this.device.createShaderModule({code: k.source, label: k.name});
    k.pipeline = this.device.createComputePipeline({
      label: k.name, layout: this.device.createPipelineLayout({bindGroupLayouts: [k.layout]}),
      compute: {module, entryPoint: "main"}});
    return k.pipeline;
  }
  launch(handle, index, argsPtr) {
    argsPtr >>>= 0;
    const kernels = this.kernelSets.get(handle);
    if (!kernels || !kernels[index]) throw new Error(`no kernel ${index} in module ${handle}`);
    const k = kernels[index];
    const w = this.M.HEAPU32, base = argsPtr >> 2;
    let [gx, gy, gz, nbuf, nscalar] = [w[base], w[base + 1], w[base + 2], w[base + 3], w[base + 4]];
    const pipeline = this.pipeline(k);
    const entries = [];
    let at = base + 5;
    const U = GPUBufferUsage;
    for (let i = 0; i < nbuf; ++i) {
      const addr = w[at], bytes = w[at + 1], constant = w[at + 2];
      at += 3;
      const size = Math.max(4, ceil(bytes, 4));
      if (addr >= DEVICE_BASE) {
        const v = this.view(addr, 0, `kernel ${k.name}: buffer ${i}`);
        if (v.offset % this.limits.minStorageBufferOffsetAlignment)
          throw new Error(`kernel ${k.name}: buffer ${i} starts ${v.offset} bytes into its allocation, not a multiple of ${this.limits.minStorageBufferOffsetAlignment} (minStorageBufferOffsetAlignment)`);
        if (size > this.limits.maxStorageBufferBindingSize)
          throw new Error(`kernel ${k.name}: buffer ${i} of ${bytes} bytes exceeds maxStorageBufferBindingSize (${this.limits.maxStorageBufferBindingSize})`);
        entries.push({binding: i, resource: {buffer: v.buf, offset: v.offset, size: Math.min(size, v.alloc.size - v.offset)}});
        continue;
      }
      // Host memory: a resident constant (the params) is uploaded once; other host memory a
      // kernel only reads is uploaded for this launch; a kernel may not write host memory.
      if (k.params[i] !== "read")
        throw new Error(`kernel ${k.name} writes buffer ${i} in host memory; on webgpu the tensors kernels write live on the device`);
      const key = `${addr}:${bytes}`;
      let buf = constant ? kernels.constants.get(key) : null;
      if (!buf) {
        buf = this.device.createBuffer({size, usage: U.STORAGE | U.COPY_DST});
        const data = new Uint8Array(size);
        data.set(this.M.HEAPU8.subarray(addr, addr + bytes));
        this.device.queue.writeBuffer(buf, 0, data);
        if (constant) kernels.constants.set(key, buf); else this.staging.push(buf);
      }
      entries.push({binding: i, resource: {buffer: buf}});
    }
    if (nscalar) {
      const n = ceil(nscalar, 4);
      const vals = new Int32Array(n);
      for (let s = 0; s < nscalar; ++s) vals[s] = w[at + s] | 0;
      const ub = this.device.createBuffer({size: n * 4, usage: U.UNIFORM | U.COPY_DST});
      this.device.queue.writeBuffer(ub, 0, vals);
      this.staging.push(ub);
      entries.push({binding: nbuf, resource: {buffer: ub}});
    }
    // A grid beyond maxComputeWorkgroupsPerDimension folds into y and z (the kernels compute
    // the linear block index and guard it).
    const maxDim = this.limits.maxComputeWorkgroupsPerDimension;
    if (gy === 1 && gz === 1) {
      while (gx > maxDim) { gx = Math.ceil(gx / 2); gy *= 2; }
      while (gy > maxDim) { gy = Math.ceil(gy / 2); gz *= 2; }
    }
    if (gx === 0 || gy === 0 || gz === 0) return;
    const enc = this.device.createCommandEncoder();
    // WebGPU refuses overlapping writable bindings in one dispatch (every binding is writable,
    // wgsl_storage.h): a buffer the kernel only reads that overlaps another binding (the same
    // tensor passed twice, or in place) is bound as a copy made just before the dispatch.
    for (let i = 0; i < entries.length; ++i) {
      const a = entries[i].resource;
      for (let j = 0; j < entries.length; ++j) {
        const b = entries[j].resource;
        if (i === j || a.buffer !== b.buffer) continue;
        const ao = a.offset || 0, bo = b.offset || 0;
        const as = a.size || a.buffer.size - ao, bs = b.size || b.buffer.size - bo;
        if (ao >= bo + bs || bo >= ao + as) continue;
        if (k.params[i] !== "read")
          continue;  // the other one gets the copy (both written: reported below)
        const copy = this.device.createBuffer({size: as, usage: U.STORAGE | U.COPY_DST});
        enc.copyBufferToBuffer(a.buffer, ao, copy, 0, as);
        this.staging.push(copy);
        entries[i].resource = {buffer: copy};
        break;
      }
    }
    for (let i = 0; i < entries.length; ++i)
      for (let j = i + 1; j < entries.length; ++j) {
        const a = entries[i].resource, b = entries[j].resource;
        if (a.buffer === b.buffer && k.params[i] !== "read" && k.params[j] !== "read" &&
            (a.offset || 0) < (b.offset || 0) + (b.size || 0) && (b.offset || 0) < (a.offset || 0) + (a.size || 0))
          throw new Error(`kernel ${k.name} writes buffers ${i} and ${j}, which overlap`);
      }
    const group = this.device.createBindGroup({layout: k.layout, entries});
    const pass = enc.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, group);
    pass.dispatchWorkgroups(gx, gy, gz);
    pass.end();
    this.device.queue.submit([enc.finish()]);
    this.launches++;
  }
  flush() {
    for (const b of this.staging) b.destroy();
    this.staging = [];
  }
}

// ---- the kernel module's linker ---------------------------------------------------------

function leb(bytes, pos) {
  let result = 0, shift = 0, b;
  do { b = bytes[pos.i++]; result += (b & 0x7f) * 2 ** shift; shift += 7; } while (b & 0x80);
  return result;
}

// dylink.0's memory and table needs of a position-independent module.
function dylinkInfo(module) {
  const sections = WebAssembly.Module.customSections(module, "dylink.0");
  if (!sections.length) throw new Error("the kernel module is not position-independent (no dylink.0 section)");
  const bytes = new Uint8Array(sections[0]);
  const info = {memSize: 0, memAlign: 0, tableSize: 0};
  const pos = {i: 0};
  while (pos.i < bytes.length) {
    const type = bytes[pos.i++];
    const len = leb(bytes, pos);
    const end = pos.i + len;
    if (type === 1) {
      info.memSize = leb(bytes, pos);
      info.memAlign = leb(bytes, pos);
      info.tableSize = leb(bytes, pos);
    }
    pos.i = end;
  }
  return info;
}

// Math functions a host kernel may import (libm names; f32 ones rounded to f32).
const f = Math.fround;
const LIBM = {
  expf: x => f(Math.exp(x)), exp: Math.exp, logf: x => f(Math.log(x)), log: Math.log,
  powf: (x, y) => f(Math.pow(x, y)), pow: Math.pow, tanhf: x => f(Math.tanh(x)), tanh: Math.tanh,
  sinf: x => f(Math.sin(x)), sin: Math.sin, cosf: x => f(Math.cos(x)), cos: Math.cos,
  tanf: x => f(Math.tan(x)), tan: Math.tan, atanf: x => f(Math.atan(x)), atan: Math.atan,
  sqrtf: x => f(Math.sqrt(x)), sqrt: Math.sqrt, fmodf: (x, y) => f(x % y), fmod: (x, y) => x % y,
  log1pf: x => f(Math.log1p(x)), expm1f: x => f(Math.expm1(x)),
  // C's round: halves away from zero (Math.round rounds -2.5 to -2).
  roundf: x => f(Math.sign(x) * Math.round(Math.abs(x))), round: x => Math.sign(x) * Math.round(Math.abs(x)),
};

const STACK_BYTES = 1 << 20;

export class KernelLinker {
  constructor(module) {
    this.M = module;
    this.pending = [];
    this.live = new Map();
    this.nextHandle = 1;
  }
  // Compiles and links `bytes` (a wasm kernel module) into the runtime's memory and table; the
  // runtime's loader then takes it by its bytes (take).
  async prepare(bytes) {
    const M = this.M;
    const module = await WebAssembly.compile(bytes);
    const info = dylinkInfo(module);
    if (info.memAlign > 12 || info.memSize > (256 << 20) || info.tableSize > 65536)
      throw new Error(`the kernel module asks for ${info.memSize} bytes aligned to 2^${info.memAlign} and ${info.tableSize} table slots`);
    const align = 2 ** info.memAlign;
    const memRaw = M._malloc(info.memSize + align);
    const stack = memRaw ? M._malloc(STACK_BYTES) : 0;
    if (!memRaw || !stack) {
      if (memRaw) M._free(memRaw);
      throw new Error("out of memory placing the kernel module");
    }
    const memBase = ceil(memRaw, align);
    M.HEAPU8.fill(0, memBase, memBase + info.memSize);
    const table = M.asm.__indirect_function_table;
    const tableBase = table.length;
    if (info.tableSize) table.grow(info.tableSize);
    const env = {
      memory: M.asm.memory,
      __indirect_function_table: table,
      __stack_pointer: new WebAssembly.Global({value: "i32", mutable: true}, stack + STACK_BYTES),
      __memory_base: new WebAssembly.Global({value: "i32", mutable: false}, memBase),
      __table_base: new WebAssembly.Global({value: "i32", mutable: false}, tableBase),
    };
    for (const imp of WebAssembly.Module.imports(module)) {
      if (imp.module !== "env" || imp.name in env) {
        if (imp.module !== "env") throw new Error(`the kernel module imports ${imp.module}.${imp.name}, which the runtime does not provide`);
        continue;
      }
      if (imp.kind === "function" && LIBM[imp.name]) env[imp.name] = LIBM[imp.name];
      else throw new Error(`the kernel module imports '${imp.name}', which the runtime does not provide`);
    }
    let instance;
    try {
      instance = await WebAssembly.instantiate(module, {env});
    } catch (e) {
      M._free(memRaw);
      M._free(stack);
      throw e;
    }
    // Its relocations and constructors run in take(): after the runtime verified the artifact.
    const token = {bytes: new Uint8Array(bytes), instance, memRaw, stack, symbols: new Map()};
    this.pending.push(token);
    return token;
  }
  take(ptr, size) {
    ptr >>>= 0, size >>>= 0;
    const heap = this.M.HEAPU8;
    for (let i = 0; i < this.pending.length; ++i) {
      const p = this.pending[i];
      if (p.bytes.length !== size) continue;
      let same = true;
      for (let j = 0; j < size && same; ++j) same = p.bytes[j] === heap[ptr + j];
      if (!same) continue;
      this.pending.splice(i, 1);
      const ex = p.instance.exports;
      if (ex.__wasm_apply_data_relocs) ex.__wasm_apply_data_relocs();
      if (ex.__wasm_call_ctors) ex.__wasm_call_ctors();
      const handle = this.nextHandle++;
      this.live.set(handle, p);
      return handle;
    }
    throw new Error("its wasm kernel module was not linked first (load artifacts with relax.js)");
  }
  symbol(handle, name) {
    const lib = this.live.get(handle);
    if (!lib) return 0;
    if (lib.symbols.has(name)) return lib.symbols.get(name);
    const fn = lib.instance.exports[name];
    if (typeof fn !== "function") return 0;
    const table = this.M.asm.__indirect_function_table;
    // A new slot per export, never reused: emscripten's JS caches table entries it called
    // (invoke_* wrappers), so a reused slot could still reach a released module's function.
    const index = table.length;
    table.grow(1);
    table.set(index, fn);
    lib.symbols.set(name, index);
    return index;
  }
  release(handle) {
    const lib = this.live.get(handle);
    if (!lib) return;
    this.live.delete(handle);

    this.M._free(lib.memRaw);
    this.M._free(lib.stack);
  }
  // Drops linked module `token` if no load took it (a load that failed before its code).
  discard(token) {
    const i = this.pending.indexOf(token);
    if (i < 0) return;
    this.pending.splice(i, 1);
    this.M._free(token.memRaw);
    this.M._free(token.stack);
  }
}

// The sections of an artifact (runtime/artifact_format.h): name -> {offset, size}. Only to
// find the kernel module before the runtime verifies the whole file.
export function readSections(bytes) {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = bytes.byteLength;
  if (n < 64) throw new Error(`not an artifact: ${n} bytes, smaller than the 64-byte trailer`);
  const t = n - 64;
  const magic = new TextDecoder().decode(bytes.subarray(t, t + 8));
  if (magic !== "RELAXART") throw new Error("not an artifact (no RELAXART trailer)");
  const tableOffset = Number(dv.getBigUint64(t + 16, true));
  const count = Number(dv.getBigUint64(t + 24, true));
  if (count > 1024 || tableOffset + 64 * count > t) throw new Error("corrupt artifact: bad section table");
  const out = new Map();
  for (let i = 0; i < count; ++i) {
    const e = tableOffset + 64 * i;
    let end = e;
    while (end < e + 32 && bytes[end] !== 0) ++end;
    const name = new TextDecoder().decode(bytes.subarray(e, end));
    const offset = Number(dv.getBigUint64(e + 32, true)), size = Number(dv.getBigUint64(e + 40, true));
    if (offset + size > tableOffset) throw new Error(`corrupt artifact: section '${name}' out of range`);
    out.set(name, {offset, size});
  }
  return out;
}
