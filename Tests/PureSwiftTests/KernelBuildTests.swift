import Foundation
import GGUF
import PureSwiftBackend
import PureSwiftKernels
import SanadCore
import Testing

// The per-CPU builds of the kernels (KernelSet.swift) must compute exactly what the portable build computes: the
// choice of build is a speed choice only. Every build this CPU runs is compared with the portable one, bit for bit.

@Suite("kernel builds")
struct KernelBuildTests {
    static let portable: any KernelSet = KernelBuilds.all.first { $0.name == "portable" }!

    @Test("the builds this CPU runs include the portable one, and auto picks the fastest")
    func selection() throws {
        #expect(KernelBuilds.runnable.last?.name == "portable")
        #expect(try KernelBuilds.select(nil).name == KernelBuilds.runnable[0].name)
        #expect(try KernelBuilds.select("portable").name == "portable")
        #expect(throws: SanadError.self) { try KernelBuilds.select("sse9") }
        for build in KernelBuilds.all where !KernelBuilds.runnable.contains(where: { $0.name == build.name }) {
            #expect(throws: SanadError.self) { try KernelBuilds.select(build.name) }
        }
    }

    @Test("matrix products: every runnable build equals the portable build bit for bit", arguments: blockFormats)
    func products(format: BlockFormat) throws {
        var r = TestRandom(11)
        let columns = format.blockSize == 256 ? 512 : 96
        let rows = 13
        let bytes = (0..<(rows * columns / format.blockSize)).flatMap { _ in format.makeBlock(&r) }
        let type = try #require(GGMLType.allCases.first { $0.description == format.name })
        // One group of four activation rows and two single ones; a batch that takes the tiled K-quant rounding.
        for (batch, build) in [6, 9].flatMap({ b in KernelBuilds.runnable.map { (b, $0) } }) {
            let x = r.floats(batch * columns)
            let act = QuantizedActivations(rows: batch, columns: columns)
            let expectedAct = QuantizedActivations(rows: batch, columns: columns)
            var got = [Float](repeating: 0, count: batch * rows)
            var expected = got
            bytes.withUnsafeBytes { raw in
                let w = WeightMatrix(
                    name: "w", type: type, rows: rows, columns: columns, rowBytes: raw.count / rows,
                    base: raw.baseAddress!)
                act.prepare(
                    x, rows: batch, columns: columns, stride: columns, format: w.activationFormat, kernels: build)
                expectedAct.prepare(
                    x, rows: batch, columns: columns, stride: columns, format: w.activationFormat,
                    kernels: Self.portable)
                build.multiplyRows(w, act, rows: 0..<rows, out: &got, outStride: rows)
                Self.portable.multiplyRows(w, expectedAct, rows: 0..<rows, out: &expected, outStride: rows)
            }
            #expect(got.map(\.bitPattern) == expected.map(\.bitPattern), "\(build.name) \(format.name)")
        }
    }

    /// The Q4_1 rows regrouped at load time (Q4_1Paired.swift) must give ggml's layout's products, bit for bit,
    /// in every build: rows of one run of blocks and of several (the scales are converted a run at a time), a run
    /// that does not fill the eight-wide conversion, and the batch shapes of the x86 kernels (ISA/AVX2/
    /// Q4_1PairedX86.swift): one row, a padded group of eight, and full groups followed by single rows.
    @Test(
        "Q4_1 in the paired layout: the same products as ggml's layout, in every runnable build",
        arguments: [64, 576, 1536, 2112])
    func pairedQ4_1(columns: Int) throws {
        var r = TestRandom(13)
        let format = try #require(blockFormats.first { $0.name == "Q4_1" })
        let rows = 5
        let bytes = (0..<(rows * columns / 32)).flatMap { _ in format.makeBlock(&r) }
        var paired = [UInt8](repeating: 0, count: bytes.count)
        #expect(q4_1PairedLayoutFits(columns: columns))
        for batch in [1, 7, 19] {
            let x = r.floats(batch * columns)
            for build in KernelBuilds.runnable {
                let act = QuantizedActivations(rows: batch, columns: columns)
                var got = [Float](repeating: 0, count: batch * rows)
                var expected = got
                var dequantized = [Float](repeating: 0, count: columns)
                var dequantizedPaired = dequantized
                bytes.withUnsafeBytes { raw in
                    paired.withUnsafeMutableBytes { out in
                        let w = WeightMatrix(
                            name: "w", type: .q4_1, rows: rows, columns: columns, rowBytes: raw.count / rows,
                            base: raw.baseAddress!)
                        #expect(w.canRepackQ4_1Paired)
                        let p = w.repackedQ4_1Paired(into: out.baseAddress!)
                        act.prepare(x, rows: batch, columns: columns, stride: columns, format: .q8_1, kernels: build)
                        build.multiplyRows(p, act, rows: 0..<rows, out: &got, outStride: rows)
                        build.multiplyRows(w, act, rows: 0..<rows, out: &expected, outStride: rows)
                        w.dequantizeRow(rows - 1, into: &dequantized)
                        p.dequantizeRow(rows - 1, into: &dequantizedPaired)
                        for b in 0..<(columns / 32) {
                            #expect(p.q4_1Offset(row: 2, block: b) == w.q4_1Offset(row: 2, block: b))
                        }
                    }
                }
                #expect(
                    got.map(\.bitPattern) == expected.map(\.bitPattern),
                    "\(build.name), \(columns) columns, batch \(batch)")
                #expect(dequantizedPaired == dequantized, "\(build.name), \(columns) columns")
            }
        }
    }

    /// The x86 kernels for Q5_0, Q8_0, Q4_K and Q6_K (ISA/AVX2) take activation rows eight at a time (the AVX-512
    /// VNNI build's K-quant kernels sixteen, ISA/AVX512VNNI), padded or regrouped, with rows handed to single-row
    /// kernels after the groups: every batch size from 1 to 13 (one group or none, padded groups of four to seven,
    /// remainders of one to three), two full groups of eight plus a remainder, and two of sixteen plus a padded
    /// group or a remainder, on a row range that does not start at 0 and is not a multiple of four weight rows (for
    /// Q5_0 and Q8_0 one of three tiles of prepared weight rows), against the portable dot products each row must
    /// equal.
    @Test(
        "Q5_0, Q8_0, Q4_K and Q6_K batches of 1…13, 19, 35 and 40 rows: every runnable build equals the portable dot products",
        arguments: ["Q5_0", "Q8_0", "Q4_K", "Q6_K"])
    func batchedProducts(name: String) throws {
        var r = TestRandom(17)
        let format = try #require(blockFormats.first { $0.name == name })
        let type = try #require(GGMLType.allCases.first { $0.description == name })
        let columns = format.blockSize == 256 ? 768 : 160
        // Q5_0 and Q8_0: more rows than one tile of prepared weight blocks (51 rows of 160 columns), a partial last.
        let rows = format.blockSize == 256 ? 11 : 120
        let range = 3..<(rows - 1)
        let bytes = (0..<(rows * columns / format.blockSize)).flatMap { _ in format.makeBlock(&r) }
        for batch in Array(1...13) + [19, 35, 40] {
            var x = r.floats(batch * columns)
            x[columns / 2] = 9  // a large value: quants of ±127 in that row's block
            for build in KernelBuilds.runnable {
                let act = QuantizedActivations(rows: batch, columns: columns)
                var got = [Float](repeating: 0, count: batch * rows)
                var expected = got
                bytes.withUnsafeBytes { raw in
                    let w = WeightMatrix(
                        name: "w", type: type, rows: rows, columns: columns, rowBytes: raw.count / rows,
                        base: raw.baseAddress!)
                    act.prepare(
                        x, rows: batch, columns: columns, stride: columns, format: w.activationFormat, kernels: build)
                    build.multiplyRows(w, act, rows: range, out: &got, outStride: rows)
                    for b in 0..<batch {
                        let a = act.row(b)
                        for i in range {
                            let row = w.row(i)
                            expected[b * rows + i] =
                                switch type {
                                case .q5_0: Q5_0Rows.dot(row, a, count: columns)
                                case .q8_0: Q8_0Rows.dot(row, a, count: columns)
                                case .q4_K where b < batch - batch % 4: dotQ4_KGrouped(row, a, count: columns)
                                case .q4_K: Q4_KRows.dot(row, a, count: columns)
                                case _ where batch >= q6_KTiledMinimumBatch: dotQ6_KTiled(row, a, count: columns)
                                default: Q6_KRows.dot(row, a, count: columns)
                                }
                        }
                    }
                }
                #expect(
                    got.map(\.bitPattern) == expected.map(\.bitPattern), "\(build.name) \(name), batch \(batch)")
            }
        }
    }

    @Test("attention, SwiGLU, GELU and RoPE: every runnable build equals the portable build bit for bit")
    func elementwise() {
        var r = TestRandom(12)
        let dims = 64
        let count = 70
        let keys = (0..<(count * dims)).map { _ in floatToHalf(r.float(-1...1)) }
        let values = (0..<(count * dims)).map { _ in floatToHalf(r.float(-1...1)) }
        let query = r.floats(dims).map(roundToHalf)
        let keyStride = tiledKeyStride(contextLength: count)  // the tiled path reads whole tiles
        let keysT = (0..<(dims * keyStride)).map { i in
            i % keyStride < count ? halfToFloat(keys[(i % keyStride) * dims + i / keyStride]) : 0
        }
        // The engine's layout: tile by tile, each tile `dims` rows of 64 positions.
        let tile = attentionTileSize
        var keysTiles = [Float](repeating: 0, count: dims * keyStride)
        for i in 0..<dims {
            for t in 0..<keyStride {
                keysTiles[t / tile * tile * dims + i * tile + t % tile] = keysT[i * keyStride + t]
            }
        }
        let queries = query + r.floats(2 * dims)  // three query heads sharing the keys: a pair and a single one
        let valuesF = values.map(halfToFloat)
        let gate = r.floats(1003, -12...12)
        let up = r.floats(1003)
        var table = [Float](repeating: 0, count: dims)
        ropeTable(
            &table, position: 37,
            configuration: RoPEConfiguration(mode: .normal, dimensions: dims, frequencyBase: 10_000))
        let heads = r.floats(3 * dims)
        func run(_ k: any KernelSet) -> [[Float]] {
            var results: [[Float]] = []
            // Plain, soft-capped, and (tiled) a sliding window starting inside the second tile.
            for (softCap, first) in [(Float(0), 0), (Float(2), 0), (Float(0), 66)] {
                var scratch = [Float](repeating: 0, count: vectorPathHeadsScratch(heads: 1, dimensions: dims))
                var vector = [Float](repeating: 0, count: dims)
                var tiled = vector
                var grouped = [Float](repeating: 0, count: 3 * dims)
                var weights = [Float](repeating: 0, count: 3 * (attentionTileSize + 2))
                k.attendHalfCacheVectorPath(
                    query: query, keys: keys, values: values, stride: dims, count: count, dimensions: dims,
                    scale: 0.125, softCap: softCap, scratch: &scratch, out: &vector)
                k.attendFloatCacheTiled(
                    queries: query, queryCount: 1, queryStride: dims, keysTransposed: keysT, keyStride: keyStride,
                    tileStride: attentionTileSize, values: valuesF, valueStride: dims, from: first, count: count,
                    dimensions: dims, scale: 0.125, softCap: softCap, weights: &weights, out: &tiled, outStride: dims)
                k.attendFloatCacheTiled(
                    queries: queries, queryCount: 3, queryStride: dims, keysTransposed: keysTiles,
                    keyStride: attentionTileSize, tileStride: attentionTileSize * dims, values: valuesF,
                    valueStride: dims, from: first, count: count, dimensions: dims, scale: 0.125, softCap: softCap,
                    weights: &weights, out: &grouped, outStride: dims)
                // Each query of the group gets what it gets alone.
                for j in 0..<3 {
                    var alone = vector
                    queries.withUnsafeBufferPointer { q in
                        k.attendFloatCacheTiled(
                            queries: q.baseAddress! + j * dims, queryCount: 1, queryStride: dims, keysTransposed: keysT,
                            keyStride: keyStride, tileStride: attentionTileSize, values: valuesF, valueStride: dims,
                            from: first, count: count, dimensions: dims, scale: 0.125, softCap: softCap,
                            weights: &weights, out: &alone, outStride: dims)
                    }
                    #expect(
                        grouped[(j * dims)..<((j + 1) * dims)].map(\.bitPattern) == alone.map(\.bitPattern),
                        "\(k.name) query \(j) of 3")
                }
                results += [vector, tiled, grouped]
            }
            var glu = [Float](repeating: 0, count: gate.count)
            k.swiGLU(gate: gate, up: up, out: &glu, count: gate.count)
            var gelu = glu
            var geglu = glu
            var geluErf = glu
            var gegluErf = glu
            k.gelu(gate, up: nil, out: &gelu, count: gate.count)
            k.gelu(gate, up: up, out: &geglu, count: gate.count)
            k.geluErf(gate, up: nil, out: &geluErf, count: gate.count)
            k.geluErf(gate, up: up, out: &gegluErf, count: gate.count)
            var rotated = heads
            k.applyRoPE(&rotated, heads: 3, table: table, dimensions: dims, mode: .normal)
            var rotatedNeoX = heads
            k.applyRoPE(&rotatedNeoX, heads: 3, table: table, dimensions: dims, mode: .neox)
            return results + [glu, gelu, geglu, geluErf, gegluErf, rotated, rotatedNeoX]
        }
        let names = [
            "vector attention", "tiled attention", "grouped tiled attention", "soft-capped vector attention",
            "soft-capped tiled attention", "soft-capped grouped tiled attention", "vector attention (again)",
            "windowed tiled attention", "windowed grouped tiled attention", "SwiGLU", "GELU", "GEGLU", "GELU (erf)",
            "GEGLU (erf)", "RoPE", "RoPE (NeoX)",
        ]
        let expected = run(Self.portable)
        #expect(expected.count == names.count)
        for build in KernelBuilds.runnable {
            let got = run(build)
            for (i, name) in names.enumerated() {
                #expect(got[i].map(\.bitPattern) == expected[i].map(\.bitPattern), "\(build.name) \(name)")
            }
        }
    }

    @Test(
        "tiled attention of a block of tokens (causal ends, sliding windows, soft cap): each query as alone, every build"
    )
    func tiledBlocks() {
        var r = TestRandom(31)
        let dims = 64
        let group = 3
        let positions = 200
        let tile = attentionTileSize
        let keyStride = tiledKeyStride(contextLength: positions)
        // Keys tile by tile (the engine's layout: each tile `dims` rows of 64 positions), values row by row.
        let keysTiles = (0..<(dims * keyStride)).map { _ in roundToHalf(r.float(-1...1)) }
        let values = (0..<(positions * dims)).map { _ in roundToHalf(r.float(-1...1)) }
        let tokens = 7
        let tokenStride = (group + 1) * dims  // other KV heads' queries lie between tokens
        let queries = r.floats(tokens * tokenStride)
        // Token t sees positions up to 130 + t (tiles 0…2, the last partial); with a window of 80, from 51 + t.
        for (softCap, window) in [(Float(0), nil), (Float(3), 80)] as [(Float, Int?)] {
            let counts = (0..<tokens).map { 131 + $0 }
            let firsts = counts.map { c in window.map { c - $0 } ?? 0 }
            var expected: [Float] = []
            for build in [Self.portable] + KernelBuilds.runnable {
                var block = [Float](repeating: .nan, count: tokens * tokenStride)
                var weights = [Float](repeating: 0, count: TiledQueries.weightCount(queries: tokens * group))
                queries.withUnsafeBufferPointer { q in
                    firsts.withUnsafeBufferPointer { f in
                        counts.withUnsafeBufferPointer { c in
                            block.withUnsafeMutableBufferPointer { o in
                                build.attendFloatCacheTiled(
                                    TiledQueries(
                                        base: q.baseAddress!, heads: group, headStride: dims, tokens: tokens,
                                        tokenStride: tokenStride, firsts: f.baseAddress!, counts: c.baseAddress!,
                                        out: o.baseAddress!, outHeadStride: dims, outTokenStride: tokenStride),
                                    keysTransposed: keysTiles, keyStride: tile, tileStride: tile * dims,
                                    values: values, valueStride: dims, dimensions: dims, scale: 0.125,
                                    softCap: softCap, weights: &weights)
                            }
                        }
                    }
                }
                var alone: [Float] = []
                for t in 0..<tokens {
                    var out = [Float](repeating: .nan, count: group * dims)
                    queries.withUnsafeBufferPointer { q in
                        build.attendFloatCacheTiled(
                            queries: q.baseAddress! + t * tokenStride, queryCount: group, queryStride: dims,
                            keysTransposed: keysTiles, keyStride: tile, tileStride: tile * dims, values: values,
                            valueStride: dims, from: firsts[t], count: counts[t], dimensions: dims, scale: 0.125,
                            softCap: softCap, weights: &weights, out: &out, outStride: dims)
                    }
                    alone += out
                    #expect(
                        block[(t * tokenStride)..<(t * tokenStride + group * dims)].map(\.bitPattern)
                            == out.map(\.bitPattern), "\(build.name) token \(t), window \(window ?? 0)")
                }
                if expected.isEmpty { expected = alone }
                #expect(alone.map(\.bitPattern) == expected.map(\.bitPattern), "\(build.name) vs portable")
            }
        }
    }

    @Test(
        "the vector path's blocks (query heads of one or more KV heads in one pass) equal the position-by-position loop, bit for bit, under every build"
    )
    func vectorPathHeads() {
        var r = TestRandom(40)
        let dims = 64
        let count = 300  // nine blocks of 32 and a partial one
        let kvHeads = 2
        let stride = kvHeads * dims
        // Keys growing with the position keep raising the maximum well past the first block (rescaling the sums).
        let keys = (0..<(count * stride)).map { floatToHalf(r.float(-1...1) + Float($0 / stride) / 100) }
        let values = (0..<(count * stride)).map { _ in floatToHalf(r.float(-1...1)) }
        for heads in [1, 3, 4] {
            let queries = r.floats(kvHeads * heads * dims).map(roundToHalf)
            for softCap in [Float(0), 2] {
                var alone = [Float](repeating: .nan, count: kvHeads * heads * dims)
                var single = [Float](repeating: .nan, count: dims)
                for row in 0..<(kvHeads * heads) {
                    let g = row / heads
                    queries.withUnsafeBufferPointer { q in
                        keys.withUnsafeBufferPointer { k in
                            values.withUnsafeBufferPointer { v in
                                attendHalfCacheVectorPathScalar(
                                    query: q.baseAddress! + row * dims, keys: k.baseAddress! + g * dims,
                                    values: v.baseAddress! + g * dims, stride: stride, count: count, dimensions: dims,
                                    scale: 0.125, softCap: softCap, scratch: &single, out: &alone[row * dims])
                            }
                        }
                    }
                }
                for build in [Self.portable] + KernelBuilds.runnable {
                    let label = "\(build.name): \(heads) heads of \(kvHeads) KV heads, soft cap \(softCap)"
                    var together = [Float](repeating: .nan, count: kvHeads * heads * dims)
                    let scratchCount = vectorPathHeadsScratch(heads: heads, kvHeads: kvHeads, dimensions: dims)
                    var scratch = [Float](repeating: .nan, count: scratchCount)
                    build.attendHalfCacheVectorPathHeads(
                        queries: queries, heads: heads, kvHeads: kvHeads, keys: keys, values: values, stride: stride,
                        count: count, dimensions: dims, scale: 0.125, softCap: softCap, scratch: &scratch,
                        out: &together)
                    #expect(together.map(\.bitPattern) == alone.map(\.bitPattern), "\(label)")
                    // One head alone through the single-head entry point.
                    var one = [Float](repeating: .nan, count: dims)
                    var oneScratch = [Float](repeating: .nan, count: vectorPathHeadsScratch(heads: 1, dimensions: dims))
                    build.attendHalfCacheVectorPath(
                        query: queries, keys: keys, values: values, stride: stride, count: count, dimensions: dims,
                        scale: 0.125, softCap: softCap, scratch: &oneScratch, out: &one)
                    #expect(one.map(\.bitPattern) == Array(alone[0..<dims]).map(\.bitPattern), "\(label), alone")
                }
            }
        }
    }

    /// llama.cpp's split decode path: the partials of consecutive position ranges combined
    /// (`reduceVectorPathPartials`) equal ggml_flash_attn_ext_reduce_partials' arithmetic, computed here from each
    /// range's own position-by-position result: `VKQ = fma(VKQ, e^(M_old − M), VKQ_c · e^(M_c − M))`, in order.
    @Test("the split decode path's partials combine as llama.cpp combines them, and one range is the whole pass")
    func vectorPathPartials() {
        var r = TestRandom(41)
        let dims = 64
        let count = 200
        let heads = 3
        let keys = (0..<(count * dims)).map { _ in floatToHalf(r.float(-1...1)) }
        let values = (0..<(count * dims)).map { _ in floatToHalf(r.float(-1...1)) }
        let queries = r.floats(heads * dims).map(roundToHalf)
        let scratchCount = vectorPathHeadsScratch(heads: heads, dimensions: dims)
        for cuts in [[0, 200], [0, 77, 200], [0, 0, 120, 200]] {
            let buffers = (0..<(cuts.count - 1)).map { _ in
                UnsafeMutablePointer<Float>.allocate(capacity: scratchCount)
            }
            defer { for buffer in buffers { buffer.deallocate() } }
            let chunks = buffers.map { VectorPathPartials($0, rows: heads, dimensions: dims) }
            var expected = [Float](repeating: 0, count: heads * dims)
            var expectedSums = [Float](repeating: 0, count: heads)
            var expectedMax = [Float](repeating: -.infinity, count: heads)
            for (c, partials) in chunks.enumerated() {
                let range = cuts[c]..<cuts[c + 1]
                keys.withUnsafeBufferPointer { k in
                    values.withUnsafeBufferPointer { v in
                        attendHalfCacheVectorPathHeads(
                            queries: queries, heads: heads, keys: k.baseAddress! + range.lowerBound * dims,
                            values: v.baseAddress! + range.lowerBound * dims, stride: dims, count: range.count,
                            dimensions: dims, scale: 0.125, scratch: buffers[c], out: nil)
                    }
                }
                for h in 0..<heads where partials.sums[h] != 0 {
                    let newMax = max(expectedMax[h], partials.maxScores[h])
                    let (old, new) = (expf(expectedMax[h] - newMax), expf(partials.maxScores[h] - newMax))
                    for i in 0..<dims {
                        expected[h * dims + i] = (partials.values(h)[i] * new).addingProduct(
                            expected[h * dims + i], old)
                    }
                    expectedSums[h] = (partials.sums[h] * new).addingProduct(expectedSums[h], old)
                    expectedMax[h] = newMax
                }
            }
            for h in 0..<heads {
                for i in 0..<dims { expected[h * dims + i] *= 1 / expectedSums[h] }
            }
            var out = [Float](repeating: .nan, count: heads * dims)
            reduceVectorPathPartials(chunks, rows: heads, dimensions: dims, out: &out)
            #expect(out.map(\.bitPattern) == expected.map(\.bitPattern), "cuts \(cuts)")
            if cuts.count == 2 {
                var whole = [Float](repeating: .nan, count: heads * dims)
                var scratch = [Float](repeating: .nan, count: scratchCount)
                attendHalfCacheVectorPathHeads(
                    queries: queries, heads: heads, keys: keys, values: values, stride: dims, count: count,
                    dimensions: dims, scale: 0.125, scratch: &scratch, out: &whole)
                #expect(out.map(\.bitPattern) == whole.map(\.bitPattern), "one range")
            }
        }
    }

    /// The x86 builds quantize activation rows with their own code (ISA/AVX2/ActivationsX86.swift): every field the
    /// products read must be the portable build's, for rows with a zero block, a block whose largest magnitude
    /// occurs with both signs (the repacked Q8_K's tie rule), and values that round to ±127 exactly.
    @Test("activation rows: every runnable build prepares each integer format as the portable build does")
    func activationRows() {
        var r = TestRandom(43)
        let columns = 512
        let rows = 5
        var x = r.floats(rows * columns, -3...3)
        for i in 0..<256 { x[columns + i] = 0 }  // row 1: a zero Q8_K block (and eight zero Q8_0 blocks)
        x[2 * columns + 5] = -4
        x[2 * columns + 9] = 4  // row 2: ±4 in one block
        x[3 * columns + 31] = 127
        x[3 * columns + 0] = -63.5  // row 3: quants that round to exactly ±127 and a tie
        let formats: [ActivationFormat] = [.q8_0, .q8_1, .q8_K, .q8_KRepacked]
        func prepared(_ k: any KernelSet, _ format: ActivationFormat) -> [[Int64]] {
            let act = QuantizedActivations(rows: rows, columns: columns)
            act.prepare(x, rows: rows, columns: columns, stride: columns, format: format, kernels: k)
            return (0..<rows).map { row in
                let a = act.row(row)
                let quants = (0..<columns).map { Int64(a.quants[$0]) }
                if format.blockSize == 32 {
                    return quants + (0..<columns).map { Int64(a.pairs[$0]) }
                        + (0..<(columns / 32)).flatMap { b in
                            [Int64(a.scales[b].bitPattern), format == .q8_1 ? Int64(a.sums[b].bitPattern) : 0]
                        }
                }
                return quants + (0..<(columns / 256)).map { Int64(a.scales[$0].bitPattern) }
                    + (0..<(columns / 16)).map { Int64(a.blockSums[$0]) }
            }
        }
        for format in formats {
            let expected = prepared(Self.portable, format)
            for build in KernelBuilds.runnable {
                let same = prepared(build, format) == expected
                #expect(same, "\(build.name) \(format)")
            }
        }
    }

    /// The tiled path's keys (`halvesToFloatsTiled`): every build writes value i of row t at the tile layout's
    /// place, for ranges that start and end inside groups of eight rows and widths with and without a tail.
    @Test("tiled keys: every runnable build converts and transposes halves into the tile layout")
    func tiledKeys() {
        var r = TestRandom(44)
        let tile = attentionTileSize
        let count = 150
        for columns in [64, 20] {
            let halves = (0..<(count * columns)).map { _ in floatToHalf(r.float(-4...4)) }
            let tiles = (count + tile - 1) / tile
            for build in KernelBuilds.runnable {
                for rows in [0..<count, 3..<61, 61..<150, 5..<6, 8..<16] {
                    var out = [Float](repeating: .nan, count: tiles * tile * columns)
                    build.halvesToFloatsTiled(halves, rows: rows, columns: columns, tile: tile, out: &out)
                    var expected = [Float](repeating: .nan, count: out.count)
                    for t in rows {
                        for i in 0..<columns {
                            expected[t / tile * tile * columns + i * tile + t % tile] = halfToFloat(
                                halves[t * columns + i])
                        }
                    }
                    let same = out.map(\.bitPattern) == expected.map(\.bitPattern)
                    #expect(same, "\(build.name) \(columns) \(rows)")
                }
            }
        }
    }
}
