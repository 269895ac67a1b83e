import Foundation
import GGUF
import PureSwiftBackend
import PureSwiftKernels
import Testing

// The kernels against straightforward references written from the format definitions (ggml-common.h of llama.cpp
// b11434), on hand-built blocks with random contents.

/// A small deterministic generator for test data.
struct TestRandom {
    var state: UInt64
    init(_ seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }
    mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        var z = state
        z = (z ^ (z >> 33)) &* 0xFF51_AFD7_ED55_8CCD
        return z ^ (z >> 33)
    }
    mutating func byte() -> UInt8 { UInt8(truncatingIfNeeded: next()) }
    mutating func float(_ range: ClosedRange<Float>) -> Float {
        range.lowerBound + Float(next() >> 40) / Float(1 << 24) * (range.upperBound - range.lowerBound)
    }
    mutating func floats(_ n: Int, _ range: ClosedRange<Float> = -1...1) -> [Float] {
        (0..<n).map { _ in float(range) }
    }
}

/// Little-endian bytes of a half.
func halfBytes(_ value: Float) -> [UInt8] {
    let h = Float16(value).bitPattern
    return [UInt8(h & 0xFF), UInt8(h >> 8)]
}

/// A block format under test: how to build random blocks and what each value should be.
struct BlockFormat: CustomTestStringConvertible, Sendable {
    let name: String
    let blockSize: Int
    let blockBytes: Int
    /// Random bytes for one block, with sane scales.
    let makeBlock: @Sendable (inout TestRandom) -> [UInt8]
    /// The reference dequantization of one block.
    let reference: @Sendable ([UInt8]) -> [Float]
    let dequantize: @Sendable (UnsafeRawPointer, UnsafeMutablePointer<Float>, Int) -> Void
    var testDescription: String { name }
}

func half(_ b: [UInt8], _ at: Int) -> Float { Float(Float16(bitPattern: UInt16(b[at]) | UInt16(b[at + 1]) << 8)) }

let blockFormats: [BlockFormat] = [
    BlockFormat(
        name: "Q4_0", blockSize: 32, blockBytes: 18,
        makeBlock: { r in halfBytes(r.float(0.001...0.1)) + (0..<16).map { _ in r.byte() } },
        reference: { b in
            let d = half(b, 0)
            return (0..<32).map { i in
                let q = i < 16 ? Int(b[2 + i] & 0x0F) : Int(b[2 + i - 16] >> 4)
                return Float(q - 8) * d
            }
        },
        dequantize: { Q4_0Rows.dequantizeRow($0, $1, count: $2) }),
    BlockFormat(
        name: "Q4_1", blockSize: 32, blockBytes: 20,
        makeBlock: { r in
            halfBytes(r.float(0.001...0.1)) + halfBytes(r.float(-0.5...0.5)) + (0..<16).map { _ in r.byte() }
        },
        reference: { b in
            let d = half(b, 0)
            let m = half(b, 2)
            return (0..<32).map { i in
                let q = i < 16 ? Int(b[4 + i] & 0x0F) : Int(b[4 + i - 16] >> 4)
                return Float(q) * d + m
            }
        },
        dequantize: { Q4_1Rows.dequantizeRow($0, $1, count: $2) }),
    BlockFormat(
        name: "Q5_0", blockSize: 32, blockBytes: 22,
        makeBlock: { r in halfBytes(r.float(0.001...0.1)) + (0..<20).map { _ in r.byte() } },
        reference: { b in
            let d = half(b, 0)
            let qh = UInt32(b[2]) | UInt32(b[3]) << 8 | UInt32(b[4]) << 16 | UInt32(b[5]) << 24
            return (0..<32).map { i in
                let low = i < 16 ? Int(b[6 + i] & 0x0F) : Int(b[6 + i - 16] >> 4)
                let high = Int((qh >> UInt32(i)) & 1) << 4
                return Float((low | high) - 16) * d
            }
        },
        dequantize: { Q5_0Rows.dequantizeRow($0, $1, count: $2) }),
    BlockFormat(
        name: "Q5_1", blockSize: 32, blockBytes: 24,
        makeBlock: { r in
            halfBytes(r.float(0.001...0.1)) + halfBytes(r.float(-0.5...0.5)) + (0..<20).map { _ in r.byte() }
        },
        reference: { b in
            let d = half(b, 0)
            let m = half(b, 2)
            let qh = UInt32(b[4]) | UInt32(b[5]) << 8 | UInt32(b[6]) << 16 | UInt32(b[7]) << 24
            return (0..<32).map { i in
                let low = i < 16 ? Int(b[8 + i] & 0x0F) : Int(b[8 + i - 16] >> 4)
                let high = Int((qh >> UInt32(i)) & 1) << 4
                return Float(low | high) * d + m
            }
        },
        dequantize: { Q5_1Rows.dequantizeRow($0, $1, count: $2) }),
    BlockFormat(
        name: "Q8_0", blockSize: 32, blockBytes: 34,
        makeBlock: { r in halfBytes(r.float(0.001...0.1)) + (0..<32).map { _ in r.byte() } },
        reference: { b in (0..<32).map { Float(Int8(bitPattern: b[2 + $0])) * half(b, 0) } },
        dequantize: { Q8_0Rows.dequantizeRow($0, $1, count: $2) }),
    BlockFormat(
        name: "Q4_K", blockSize: 256, blockBytes: 144,
        makeBlock: { r in
            halfBytes(r.float(0.0001...0.01)) + halfBytes(r.float(0.0001...0.01)) + (0..<140).map { _ in r.byte() }
        },
        reference: { b in
            let d = half(b, 0)
            let dmin = half(b, 2)
            let scaleMin = { kQuantScaleMin(Array(b[4..<16]), $0) }
            return (0..<256).map { i in
                let group = i / 64
                let isHigh = (i % 64) >= 32
                let byte = b[16 + 32 * group + i % 32]
                let q = isHigh ? Int(byte >> 4) : Int(byte & 0x0F)
                let (s, m) = scaleMin(2 * group + (isHigh ? 1 : 0))
                return d * Float(s) * Float(q) - dmin * Float(m)
            }
        },
        dequantize: { Q4_KRows.dequantizeRow($0, $1, count: $2) }),
    BlockFormat(
        name: "Q6_K", blockSize: 256, blockBytes: 210,
        makeBlock: { r in (0..<208).map { _ in r.byte() } + halfBytes(r.float(0.0001...0.01)) },
        reference: { b in
            let d = half(b, 208)
            return (0..<256).map { i in
                let half128 = i / 128
                let j = i % 128
                let l = j % 32
                let quarter = j / 32
                let ql = b[64 * half128 + l + (quarter % 2 == 1 ? 32 : 0)]
                let low = quarter < 2 ? Int(ql & 0x0F) : Int(ql >> 4)
                let qh = b[128 + 32 * half128 + l]
                let high = Int((qh >> UInt8(2 * quarter)) & 3)
                let scale = Int8(bitPattern: b[192 + 8 * half128 + l / 16 + 2 * quarter])
                return d * Float(scale) * Float((low | high << 4) - 32)
            }
        },
        dequantize: { Q6_KRows.dequantizeRow($0, $1, count: $2) }),
    BlockFormat(
        name: "Q2_K", blockSize: 256, blockBytes: 84,
        makeBlock: { r in
            (0..<80).map { _ in r.byte() } + halfBytes(r.float(0.0001...0.01)) + halfBytes(r.float(0.0001...0.01))
        },
        reference: { b in
            let d = half(b, 80)
            let dmin = half(b, 82)
            return (0..<256).map { i in
                let (n, j, l) = (i / 128, (i % 128) / 32, i % 32)
                let sc = b[8 * n + 2 * j + l / 16]
                let q = (b[16 + 32 * n + l] >> UInt8(2 * j)) & 3
                return d * Float(sc & 0x0F) * Float(q) - dmin * Float(sc >> 4)
            }
        },
        dequantize: { Q2_KRows.dequantizeRow($0, $1, count: $2) }),
    BlockFormat(
        name: "Q3_K", blockSize: 256, blockBytes: 110,
        makeBlock: { r in (0..<108).map { _ in r.byte() } + halfBytes(r.float(0.0001...0.01)) },
        reference: { b in
            let d = half(b, 108)
            // ggml's unpacking of the sixteen 6-bit scales (kmask1 = 0x03030303, kmask2 = 0x0f0f0f0f).
            func word(_ i: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(b[96 + 4 * i + $1]) << (8 * UInt32($1)) } }
            let (a0, a1, t) = (word(0), word(1), word(2))
            let packed = [
                (a0 & 0x0F0F_0F0F) | ((t & 0x0303_0303) << 4), (a1 & 0x0F0F_0F0F) | (((t >> 2) & 0x0303_0303) << 4),
                ((a0 >> 4) & 0x0F0F_0F0F) | (((t >> 4) & 0x0303_0303) << 4),
                ((a1 >> 4) & 0x0F0F_0F0F) | (((t >> 6) & 0x0303_0303) << 4),
            ]
            let scales = (0..<16).map { Int(Int8(truncatingIfNeeded: packed[$0 / 4] >> (8 * UInt32($0 % 4)))) - 32 }
            return (0..<256).map { i in
                let (n, j, l) = (i / 128, (i % 128) / 32, i % 32)
                let low = Int((b[32 + 32 * n + l] >> UInt8(2 * j)) & 3)
                let high = (b[l] >> UInt8(4 * n + j)) & 1 == 1 ? 0 : 4
                return d * Float(scales[8 * n + 2 * j + l / 16]) * Float(low - high)
            }
        },
        dequantize: { Q3_KRows.dequantizeRow($0, $1, count: $2) }),
    BlockFormat(
        name: "Q5_K", blockSize: 256, blockBytes: 176,
        makeBlock: { r in
            halfBytes(r.float(0.0001...0.01)) + halfBytes(r.float(0.0001...0.01)) + (0..<172).map { _ in r.byte() }
        },
        reference: { b in
            let d = half(b, 0)
            let dmin = half(b, 2)
            let scaleMin = { kQuantScaleMin(Array(b[4..<16]), $0) }
            return (0..<256).map { i in
                let group = i / 64
                let sub = 2 * group + ((i % 64) >= 32 ? 1 : 0)
                let byte = b[48 + 32 * group + i % 32]
                let low = (i % 64) >= 32 ? Int(byte >> 4) : Int(byte & 0x0F)
                let high = Int((b[16 + i % 32] >> UInt8(sub)) & 1) << 4
                let (s, m) = scaleMin(sub)
                return d * Float(s) * Float(low | high) - dmin * Float(m)
            }
        },
        dequantize: { Q5_KRows.dequantizeRow($0, $1, count: $2) }),
    BlockFormat(
        name: "IQ4_NL", blockSize: 32, blockBytes: 18,
        makeBlock: { r in halfBytes(r.float(0.001...0.1)) + (0..<16).map { _ in r.byte() } },
        reference: { b in
            (0..<32).map { i in
                let q = i < 16 ? Int(b[2 + i] & 0x0F) : Int(b[2 + i - 16] >> 4)
                return half(b, 0) * Float(iq4NonLinear[q])
            }
        },
        dequantize: { IQ4_NLRows.dequantizeRow($0, $1, count: $2) }),
    BlockFormat(
        name: "IQ4_XS", blockSize: 256, blockBytes: 136,
        makeBlock: { r in halfBytes(r.float(0.0001...0.01)) + (0..<134).map { _ in r.byte() } },
        reference: { b in
            let d = half(b, 0)
            let high = Int(b[2]) | Int(b[3]) << 8
            return (0..<256).map { i in
                let (s, j) = (i / 32, i % 32)
                let ls = (Int(b[4 + s / 2] >> UInt8(4 * (s % 2))) & 15) | ((high >> (2 * s)) & 3) << 4
                let q = j < 16 ? Int(b[8 + 16 * s + j] & 0x0F) : Int(b[8 + 16 * s + j - 16] >> 4)
                return d * Float(ls - 32) * Float(iq4NonLinear[q])
            }
        },
        dequantize: { IQ4_XSRows.dequantizeRow($0, $1, count: $2) }),
]

/// A row's four-row dot product through the weight-type table.
struct RowDot4: WeightTypeWork {
    let row: UnsafeRawPointer
    let a: ActivationRow
    let rowStride: Int
    let count: Int
    func callAsFunction<W: WeightType>(_: W.Type) -> SIMD4<Float> { W.dot4(row, a, rowStride: rowStride, count: count) }
}

/// Scale and min `j` (0..<8) of Q4_K and Q5_K from their 12 packed bytes `sc`: j < 4 in the low bits of bytes j and
/// j+4; j ≥ 4 split over bytes j+4 and the top bits of bytes j−4 and j.
func kQuantScaleMin(_ sc: [UInt8], _ j: Int) -> (Int, Int) {
    if j < 4 { return (Int(sc[j] & 63), Int(sc[j + 4] & 63)) }
    return (Int(sc[j + 4] & 0x0F) | Int(sc[j - 4] >> 6) << 4, Int(sc[j + 4] >> 4) | Int(sc[j] >> 6) << 4)
}

/// ggml-common.h's kvalues_iq4nl.
let iq4NonLinear: [Int] = [-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113]

/// A row's dot product through the weight-type table.
struct RowDot: WeightTypeWork {
    let row: UnsafeRawPointer
    let a: ActivationRow
    let count: Int
    func callAsFunction<W: WeightType>(_: W.Type) -> Float { W.dot(row, a, count: count) }
}

@Suite("Kernels")
struct KernelTests {
    @Test("half ↔ float: every half converts exactly and back")
    func halfConversionsAreExact() {
        for bits in 0...UInt16.max {
            let expected = Float(Float16(bitPattern: bits))
            let got = halfToFloat(bits)
            if expected.isNaN {
                #expect(got.isNaN)
            } else {
                #expect(got.bitPattern == expected.bitPattern, "half \(bits)")
                #expect(floatToHalf(got) == bits, "round trip of half \(bits)")
                #expect(halfToFloatTable[Int(bits)].bitPattern == expected.bitPattern)
            }
        }
    }

    @Test("float → half rounds to nearest even like Float16, including ties, subnormals and overflow")
    func floatToHalfRounding() {
        var r = TestRandom(1)
        var values: [Float] = [
            0, -0, 65504, 65519.996, 65520, 1e10, -1e10, 5.96e-8, 2.98e-8, 2.99e-8, 6.1e-5, .infinity,
        ]
        // Exact ties between neighbouring halves.
        for bits in stride(from: UInt16(0), to: 0x7BFF, by: 97) {
            let a = Float(Float16(bitPattern: bits))
            let b = Float(Float16(bitPattern: bits + 1))
            values.append((a + b) / 2)
        }
        for _ in 0..<20000 {
            values.append(
                Float(
                    bitPattern: UInt32(truncatingIfNeeded: r.next()) & 0x7FFF_FFFF
                        | (r.byte() & 1 == 0 ? 0 : 0x8000_0000)))
        }
        for v in values where !v.isNaN {
            #expect(floatToHalf(v) == Float16(v).bitPattern, "\(v)")
        }
    }

    @Test("bfloat16 rounds to nearest even")
    func bfloat16() {
        #expect(bfloat16ToFloat(0x3F80) == 1)
        #expect(floatToBFloat16(1) == 0x3F80)
        // 1 + 2⁻⁸ is halfway between 1 and the next bfloat16: ties go to the even mantissa (1).
        #expect(floatToBFloat16(1 + 1.0 / 256) == 0x3F80)
        #expect(floatToBFloat16(1 + 3.0 / 256) == 0x3F82)
        #expect(bfloat16ToFloat(floatToBFloat16(-2.5)) == -2.5)
    }

    @Test("dequantization matches the format definition", arguments: blockFormats)
    func dequantization(_ format: BlockFormat) {
        var r = TestRandom(UInt64(format.blockBytes))
        for _ in 0..<50 {
            let blocks = (0..<3).map { _ in format.makeBlock(&r) }
            #expect(blocks.allSatisfy { $0.count == format.blockBytes })
            let bytes = blocks.flatMap { $0 }
            let expected = blocks.flatMap(format.reference)
            var got = [Float](repeating: .nan, count: expected.count)
            bytes.withUnsafeBytes { raw in
                got.withUnsafeMutableBufferPointer {
                    format.dequantize(raw.baseAddress!, $0.baseAddress!, expected.count)
                }
            }
            for i in expected.indices {
                // The reference multiplies in another order for K-quants; allow one rounding.
                #expect(abs(got[i] - expected[i]) <= abs(expected[i]) * 1e-6 + 1e-9, "\(format.name) value \(i)")
            }
        }
    }

    @Test("unquantized rows: F16 and BF16 dequantize exactly")
    func floatRows() {
        let values: [Float] = [0, 1, -2.5, 0.1, 65504, -1e-5, 3.14159]
        let halves = values.flatMap { halfBytes($0) }
        var out = [Float](repeating: 0, count: values.count)
        halves.withUnsafeBytes { F16Rows.dequantizeRow($0.baseAddress!, &out, count: values.count) }
        #expect(out == values.map { Float(Float16($0)) })
        let bf = values.flatMap { v -> [UInt8] in
            let b = floatToBFloat16(v)
            return [UInt8(b & 0xFF), UInt8(b >> 8)]
        }
        bf.withUnsafeBytes { BF16Rows.dequantizeRow($0.baseAddress!, &out, count: values.count) }
        #expect(out == values.map { bfloat16ToFloat(floatToBFloat16($0)) })
    }

    @Test("Q8_0/Q8_1/Q8_K activation quantization follows ggml")
    func activationQuantization() {
        var r = TestRandom(7)
        let x = r.floats(256, -3...3)
        let act = QuantizedActivations(rows: 1, columns: 256)
        act.prepare(x, rows: 1, columns: 256, stride: 256, format: .q8_1)
        let row = act.row(0)
        for b in 0..<8 {
            let block = Array(x[(32 * b)..<(32 * b + 32)])
            let amax = block.map(abs).max() ?? 0
            #expect(row.scales[b] == Float(Float16(amax / 127)))
            var sum = 0
            for i in 0..<32 {
                let q = Int((block[i] * (127 / amax)).rounded(.toNearestOrEven))
                #expect(Int(row.quants[32 * b + i]) == q)
                sum += q
            }
            #expect(row.sums[b] == Float(Float16(amax / 127 * Float(sum))))
        }
        act.prepare(x, rows: 1, columns: 256, stride: 256, format: .q8_K)
        let k = act.row(0)
        let amax = x.map(abs).max() ?? 0
        let signed = x.first { abs($0) == amax } ?? 0
        #expect(k.scales[0] == 1 / (-127 / signed))
        for j in 0..<16 {
            let s = (0..<16).reduce(0) { $0 + Int(k.quants[16 * j + $1]) }
            #expect(Int(k.blockSums[j]) == s)
        }
    }

    /// Where a block's largest magnitude occurs with both signs, ggml's reference quantizer takes the first one's
    /// sign and the repacked-Q4_K quantizer (ggml_quantize_mat_q8_K_4x8) the positive one, for the rows of its
    /// groups of four only; the rows after the last group are quantized as `.q8_K`.
    @Test("Q8_K for repacked Q4_K: a tie of magnitudes takes the positive sign in groups of four")
    func repackedQ8_KTies() {
        var x = [Float](repeating: 0.5, count: 5 * 256)
        for r in 0..<5 {
            x[r * 256 + 3] = -2
            x[r * 256 + 200] = 2
        }
        let act = QuantizedActivations(rows: 5, columns: 256)
        act.prepare(x, rows: 5, columns: 256, stride: 256, format: .q8_KRepacked)
        for r in 0..<4 {
            #expect(act.row(r).scales[0] == 1 / (-127 / Float(2)))
            #expect(act.row(r).quants[200] == -127 && act.row(r).quants[3] == 127)
        }
        #expect(act.row(4).scales[0] == 1 / (127 / Float(2)))
        act.prepare(x, rows: 5, columns: 256, stride: 256, format: .q8_K)
        #expect(act.row(0).scales[0] == 1 / (127 / Float(2)))
    }

    @Test("dot products agree with dequantized weights × activations", arguments: blockFormats)
    func dotProducts(_ format: BlockFormat) throws {
        var r = TestRandom(UInt64(format.blockSize + format.blockBytes))
        let columns = 512
        let rows = 6
        let bytes = (0..<(rows * columns / format.blockSize)).flatMap { _ in format.makeBlock(&r) }
        let x = r.floats(4 * columns)
        let type: ActivationFormat =
            format.blockSize == 256 ? .q8_K : (["Q4_1", "Q5_1"].contains(format.name) ? .q8_1 : .q8_0)
        let act = QuantizedActivations(rows: 4, columns: columns)
        act.prepare(x, rows: 4, columns: columns, stride: columns, format: type)
        let rowBytes = columns / format.blockSize * format.blockBytes
        try bytes.withUnsafeBytes { raw in
            let base = try #require(raw.baseAddress)
            for rowIndex in 0..<rows {
                let row = base + rowIndex * rowBytes
                var weights = [Float](repeating: 0, count: columns)
                format.dequantize(row, &weights, columns)
                let type = try #require(GGMLType.allCases.first { $0.description == format.name })
                func dot(_ a: ActivationRow) -> Float {
                    withWeightType(type, RowDot(row: row, a: a, count: columns)) ?? .nan
                }
                for b in 0..<4 {
                    var reference: Double = 0
                    var magnitude: Double = 0
                    for i in 0..<columns {
                        reference += Double(weights[i]) * Double(x[b * columns + i])
                        magnitude += abs(Double(weights[i]) * Double(x[b * columns + i]))
                    }
                    // Only the activations' 8-bit quantization separates the two.
                    let got = dot(act.row(b))
                    #expect(
                        abs(Double(got) - reference) <= magnitude * 0.02 + 1e-6,
                        "\(format.name) row \(rowIndex) col \(b)")
                }
            }
        }
    }

    @Test("the four-column kernels equal four single dot products")
    func fourColumns() throws {
        var r = TestRandom(3)
        let columns = 256
        for format in blockFormats where format.blockSize == 32 {
            let bytes = (0..<(columns / 32)).flatMap { _ in format.makeBlock(&r) }
            let x = r.floats(4 * columns)
            let act = QuantizedActivations(rows: 4, columns: columns)
            act.prepare(
                x, rows: 4, columns: columns, stride: columns,
                format: ["Q4_1", "Q5_1"].contains(format.name) ? .q8_1 : .q8_0)
            try bytes.withUnsafeBytes { raw in
                let row = try #require(raw.baseAddress)
                let (a0, a1, a2, a3) = (act.row(0), act.row(1), act.row(2), act.row(3))
                let type = try #require(GGMLType.allCases.first { $0.description == format.name })
                let four = try #require(
                    withWeightType(type, RowDot4(row: row, a: a0, rowStride: columns, count: columns)))
                let single = try [a0, a1, a2, a3].map {
                    try #require(withWeightType(type, RowDot(row: row, a: $0, count: columns)))
                }
                let pair = (four, single)
                for i in 0..<4 { #expect(pair.0[i] == pair.1[i], "\(format.name) column \(i)") }
            }
        }
    }

    @Test("RMS norm: unit root-mean-square, then the weight")
    func rmsNormSmall() {
        let x: [Float] = [1, 2, 3, 4]
        let w: [Float] = [1, 1, 2, 0.5]
        var out = [Float](repeating: 0, count: 4)
        rmsNorm(x, weight: w, out: &out, count: 4, epsilon: 0)
        let rms = (30.0 / 4.0).squareRoot()
        for i in 0..<4 { #expect(abs(Double(out[i]) - Double(x[i] * w[i]) / rms) < 1e-6) }
        rmsNorm(x, weight: nil, out: &out, count: 4, epsilon: 1e6)
        #expect(out[3] < 0.01)  // a huge ε dominates the mean of squares
    }

    @Test("softmax sums to one, keeps order, survives large logits")
    func softmaxSmall() {
        var x: [Float] = [1000, 1001, 999]
        softmax(&x, count: 3)
        #expect(abs(x.reduce(0, +) - 1) < 1e-6)
        #expect(x[1] > x[0] && x[0] > x[2])
        #expect(abs(x[1] / x[0] - Float(M_E)) < 1e-4)
    }

    @Test("RoPE: identity at position 0, rotation of the right pairs at position p")
    func ropeSmall() {
        let config = RoPEConfiguration(mode: .normal, dimensions: 4, frequencyBase: 10_000)
        var table = [Float](repeating: 0, count: 4)
        ropeTable(&table, position: 0, configuration: config)
        var x: [Float] = [1, 2, 3, 4]
        applyRoPEExact(&x, table: table, dimensions: 4, mode: .normal)
        #expect(x == [1, 2, 3, 4])
        ropeTable(&table, position: 3, configuration: config)
        x = [1, 0, 0, 1]
        applyRoPEExact(&x, table: table, dimensions: 4, mode: .normal)
        // Pair 0 turns by 3 rad, pair 1 by 3 · 10000^(−1/2) rad.
        #expect(abs(x[0] - cos(3)) < 1e-6 && abs(x[1] - sin(3)) < 1e-6)
        let angle: Float = 3 * powf(10_000, -0.5)
        #expect(abs(x[2] + sin(angle)) < 1e-6 && abs(x[3] - cos(angle)) < 1e-6)
        // NeoX pairs i with i + dims/2.
        x = [1, 0, 0, 0]
        applyRoPEExact(&x, table: table, dimensions: 4, mode: .neox)
        #expect(abs(x[0] - cos(3)) < 1e-6 && abs(x[2] - sin(3)) < 1e-6 && x[1] == 0)
        // The fused rotation agrees with the textbook one to within rounding.
        var z: [Float] = [0.3, -1.2, 2.5, 0.7]
        let y = [
            z[0] * table[0] - z[1] * table[1], z[0] * table[1] + z[1] * table[0],
            z[2] * table[2] - z[3] * table[3], z[2] * table[3] + z[3] * table[2],
        ]
        applyRoPEExact(&z, table: table, dimensions: 4, mode: .normal)
        for i in 0..<4 { #expect(abs(y[i] - z[i]) < 1e-6) }
    }

    @Test("SwiGLU: silu(gate) · up, the llama.cpp polynomial exp within rounding")
    func swiGLUSmall() {
        var r = TestRandom(11)
        let gate = r.floats(37, -20...20) + [0, -100, 100, 88, -88]
        let up = r.floats(gate.count, -2...2)
        var exact = [Float](repeating: 0, count: gate.count)
        swiGLUExact(gate: gate, up: up, out: &exact, count: gate.count)
        for i in gate.indices {
            let reference = Double(gate[i]) / (1 + exp(-Double(gate[i]))) * Double(up[i])
            #expect(abs(Double(exact[i]) - reference) <= abs(reference) * 1e-5 + 1e-6, "gate \(gate[i])")
        }
    }

    /// Entries of ggml's `ggml_table_gelu_f16` (b11434, read from libggml-cpu.so after `ggml_cpu_init()`): the
    /// half input and the half GELU stored for it. 0xBFFF is the entry where GCC's fused `1 + 0.044715·x·x` matters.
    static let ggmlGELUTable: [(UInt16, UInt16)] = [
        (0xBFFF, 0xA9D3), (0x3C00, 0x3ABB), (0xBC00, 0xB115), (0x4000, 0x3FD2), (0xC000, 0xA9D0), (0x3800, 0x3588),
        (0x4500, 0x4500), (0xC500, 0x8005), (0x2E66, 0x2AE8),
    ]

    @Test("GELU: ggml's half table, its ±10 cut-offs, the gated form, and the erf form")
    func gelu() {
        for (input, output) in Self.ggmlGELUTable {
            #expect(geluHalfTable[Int(input)] == halfToFloat(output), "half \(String(input, radix: 16))")
        }
        let x: [Float] = [-12, -10, -1.9990234, -0.3, 0, 0.3, 1, 2.5, 9.99, 10, 30]
        let up: [Float] = x.map { _ in -1.5 }
        var plain = [Float](repeating: 0, count: x.count)
        var gated = plain
        geluExact(x, up: nil, out: &plain, count: x.count)
        geluExact(x, up: up, out: &gated, count: x.count)
        for i in x.indices {
            let v = Double(x[i])
            let tanhForm = 0.5 * v * (1 + tanh(0.7978845608 * v * (1 + 0.044715 * v * v)))
            if x[i] <= -10 {
                #expect(plain[i] == 0 && gated[i].bitPattern == Float(0).bitPattern)  // +0, as ggml writes it
            } else if x[i] >= 10 {
                #expect(plain[i] == x[i] && gated[i] == x[i] * up[i])
            } else {
                // The input and the result are rounded to half.
                #expect(abs(Double(plain[i]) - tanhForm) <= 2e-3 * abs(tanhForm) + 1e-4, "x \(x[i])")
                #expect(gated[i] == plain[i] * up[i])
            }
        }
        var erfForm = plain
        var erfGated = plain
        geluErfExact(x, up: nil, out: &erfForm, count: x.count)
        geluErfExact(x, up: up, out: &erfGated, count: x.count)
        for i in x.indices {
            let reference = 0.5 * Double(x[i]) * (1 + erf(Double(x[i]) / 2.0.squareRoot()))
            #expect(abs(Double(erfForm[i]) - reference) <= 1e-6 * max(1, abs(reference)), "x \(x[i])")
            #expect(erfGated[i] == erfForm[i] * up[i])
        }
    }

    @Test("layer norm: zero mean, unit variance, then weight and bias")
    func layerNormSmall() {
        let x: [Float] = (0..<20).map { Float($0) * 0.7 - 3 }
        let weight: [Float] = (0..<20).map { 1 + Float($0) / 10 }
        let bias: [Float] = (0..<20).map { Float($0) / 100 - 0.1 }
        var out = [Float](repeating: 0, count: 20)
        layerNorm(x, weight: nil, bias: nil, out: &out, count: 20, epsilon: 1e-12)
        let mean = out.reduce(0, +) / 20
        let variance = out.map { $0 * $0 }.reduce(0, +) / 20
        #expect(abs(mean) < 1e-6 && abs(variance - 1) < 1e-5)
        var scaled = out
        layerNorm(x, weight: weight, bias: bias, out: &scaled, count: 20, epsilon: 1e-12)
        for i in 0..<20 { #expect(scaled[i] == out[i] * weight[i] + bias[i]) }
        var inPlace = x
        inPlace.withUnsafeMutableBufferPointer {
            layerNorm($0.baseAddress!, weight: weight, bias: bias, out: $0.baseAddress!, count: 20, epsilon: 1e-12)
        }
        #expect(inPlace == scaled)
    }

    @Test(
        "attention over a half cache: both paths agree with a double-precision softmax",
        arguments: [
            AttentionCase(count: 9), AttentionCase(count: 150), AttentionCase(count: 150, first: 70),
            AttentionCase(count: 150, first: 3), AttentionCase(count: 40, softCap: 1.5),
            AttentionCase(count: 150, first: 100, softCap: 1.5),
        ])
    func attention(_ c: AttentionCase) {
        let count = c.count
        let first = c.first
        var r = TestRandom(UInt64(count))
        let dims = 32
        let stride = 48
        var keys = [UInt16](repeating: 0, count: count * stride)
        var values = keys
        for t in 0..<count {
            for i in 0..<dims {
                keys[t * stride + 8 + i] = floatToHalf(r.float(-2...2))
                values[t * stride + 8 + i] = floatToHalf(r.float(-2...2))
            }
        }
        let q = r.floats(dims, -2...2).map(roundToHalf)
        var reference = [Double](repeating: 0, count: dims)
        var weights = (first..<count).map { t -> Double in
            let s =
                (0..<dims).reduce(0.0) { $0 + Double(q[$1]) * Double(halfToFloat(keys[t * stride + 8 + $1])) } * 0.25
            return c.softCap == 0 ? s : Double(c.softCap) * tanh(s / Double(c.softCap))
        }
        let m = weights.max() ?? 0
        weights = weights.map { exp($0 - m) }
        let total = weights.reduce(0, +)
        for i in 0..<dims {
            for t in first..<count {
                reference[i] += weights[t - first] / total * Double(halfToFloat(values[t * stride + 8 + i]))
            }
        }
        var scratch = [Float](repeating: 0, count: vectorPathHeadsScratch(heads: 1, dimensions: dims))
        var out = [Float](repeating: 0, count: dims)
        var vectorOut = out
        var keysFloat = [Float](repeating: 0, count: keys.count)
        var valuesFloat = keysFloat
        halvesToFloats(keys, &keysFloat, count: keys.count)
        halvesToFloats(values, &valuesFloat, count: values.count)
        #expect(keysFloat == keys.map(halfToFloat))
        // The tiled path reads keys dimension-major.
        let keyStride = tiledKeyStride(contextLength: count)
        var keysTransposed = [Float](repeating: 0, count: dims * keyStride)
        for t in 0..<count {
            for i in 0..<dims { keysTransposed[i * keyStride + t] = keysFloat[t * stride + 8 + i] }
        }
        var tileWeights = [Float](repeating: 0, count: attentionTileSize + 2)
        valuesFloat.withUnsafeBufferPointer { v in
            BuiltKernels().attendFloatCacheTiled(
                queries: q, queryCount: 1, queryStride: dims, keysTransposed: keysTransposed, keyStride: keyStride,
                tileStride: attentionTileSize, values: v.baseAddress! + 8, valueStride: stride, from: first,
                count: count, dimensions: dims, scale: 0.25, softCap: c.softCap, weights: &tileWeights, out: &out,
                outStride: dims)
        }
        keys.withUnsafeBufferPointer { k in
            values.withUnsafeBufferPointer { v in
                // A window is the vector path's first position.
                attendHalfCacheVectorPath(
                    query: q, keys: k.baseAddress! + 8 + first * stride, values: v.baseAddress! + 8 + first * stride,
                    stride: stride, count: count - first, dimensions: dims, scale: 0.25, softCap: c.softCap,
                    scratch: &scratch, out: &vectorOut)
            }
        }
        for i in 0..<dims {
            #expect(abs(Double(out[i]) - reference[i]) < 1e-5)
            // The vector path keeps its running sum in half precision.
            #expect(abs(Double(vectorOut[i]) - reference[i]) < 5e-3)
        }
    }
}

/// An attention kernel case: `count` cached positions, attended from `first` (a sliding window), scores
/// soft-capped at `softCap` (0: not).
struct AttentionCase: CustomTestStringConvertible, Sendable {
    var count: Int
    var first = 0
    var softCap: Float = 0
    var testDescription: String { "\(count) positions from \(first), soft cap \(softCap)" }
}
