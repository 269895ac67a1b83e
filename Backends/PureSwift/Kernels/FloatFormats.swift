// Unquantized weights: F32, F16 and BF16 rows. Their dot products read activations rounded to the weight's own
// precision (as ggml converts them), kept as floats. For F16/BF16 the prepared activations of every full group of
// 16 are stored as its 8 even values then its 8 odd values, matching how a 16-value load of halves splits into
// even and odd lanes; a tail shorter than 16 stays in order.

/// Reorders each full group of 16 floats into even-then-odd order (the layout the F16/BF16 dot products read).
@inline(__always)
@inlinable
func interleaveForHalves(_ x: UnsafeMutablePointer<Float>, count: Int) {
    var tmp = SIMD16<Float>()
    for g in 0..<count / 16 {
        let p = x + 16 * g
        for i in 0..<8 {
            tmp[i] = p[2 * i]
            tmp[8 + i] = p[2 * i + 1]
        }
        for i in 0..<16 { p[i] = tmp[i] }
    }
}

// llama.cpp's AVX2 build multiplies unquantized weights two ways. One activation row: ggml_vec_dot_f32 /
// ggml_vec_dot_f16 (four accumulators of eight lanes over 32 values at a time, fused multiply-adds, reduced as
// GGML_F32x8_REDUCE) and ggml_vec_dot_bf16 (the same shape, the multiply-add fused by the compiler, reduced as
// hsum_float_8). Two rows or more: llamafile's tinyBLAS (one accumulator of eight lanes per output, fused
// multiply-adds over 8 values at a time, then hsum). 16-bit weights load sixteen at a time as even and odd lanes
// (the activations' layout), so the kernels below keep each natural lane's value in an even or odd lane and put
// the lanes back in natural order before the reductions, which are all that depends on the order.

/// The weights of 16 values at `offset` as (even, odd) lanes, and one weight of a tail.
public protocol SixteenBitWeights {
    static func load16(_ row: UnsafeRawPointer, _ offset: Int) -> (even: SIMD8<Float>, odd: SIMD8<Float>)
    static func load1(_ row: UnsafeRawPointer, _ offset: Int) -> Float
}

/// Natural lanes 0…7 from even/odd lanes 4h…4h+3 (h: 0 for values 0…7 of a 16-value group, 1 for 8…15).
@inline(__always)
@inlinable
func naturalLanes(_ even: SIMD8<Float>, _ odd: SIMD8<Float>, half h: Int) -> SIMD8<Float> {
    let b = 4 * h
    return SIMD8(even[b], odd[b], even[b + 1], odd[b + 1], even[b + 2], odd[b + 2], even[b + 3], odd[b + 3])
}

/// GGML_F32x8_REDUCE of four accumulators: (0 + 2) + (1 + 3), low + high half, then (r0 + r1) + (r2 + r3).
@inline(__always)
@inlinable
func ggmlReduce(_ a0: SIMD8<Float>, _ a1: SIMD8<Float>, _ a2: SIMD8<Float>, _ a3: SIMD8<Float>) -> Float {
    let s = (a0 + a2) + (a1 + a3)
    let r = s.lowHalf + s.highHalf
    return (r[0] + r[1]) + (r[2] + r[3])
}

/// ggml_vec_dot_f16 (or, with `hsum`, ggml_vec_dot_bf16's reduction) of a 16-bit row.
@inline(__always)
@inlinable
func dotSixteenBitSingle<W: SixteenBitWeights>(
    _: W.Type, _ row: UnsafeRawPointer, _ a: ActivationRow, count: Int, bf16Reduction: Bool
) -> Float {
    var e0 = SIMD8<Float>()  // even lanes of values 0…15 of each 32: accumulators 0 and 1
    var o0 = SIMD8<Float>()
    var e1 = SIMD8<Float>()  // values 16…31: accumulators 2 and 3
    var o1 = SIMD8<Float>()
    let x = UnsafeRawPointer(a.floats)
    var i = 0
    while i + 32 <= count {
        let (we0, wo0) = W.load16(row, i)
        let (we1, wo1) = W.load16(row, i + 16)
        e0 = e0.addingProduct(we0, x.loadUnaligned(fromByteOffset: 4 * i, as: SIMD8<Float>.self))
        o0 = o0.addingProduct(wo0, x.loadUnaligned(fromByteOffset: 4 * i + 32, as: SIMD8<Float>.self))
        e1 = e1.addingProduct(we1, x.loadUnaligned(fromByteOffset: 4 * i + 64, as: SIMD8<Float>.self))
        o1 = o1.addingProduct(wo1, x.loadUnaligned(fromByteOffset: 4 * i + 96, as: SIMD8<Float>.self))
        i += 32
    }
    let a0 = naturalLanes(e0, o0, half: 0)
    let a1 = naturalLanes(e0, o0, half: 1)
    let a2 = naturalLanes(e1, o1, half: 0)
    let a3 = naturalLanes(e1, o1, half: 1)
    var sum = bf16Reduction ? llamaHorizontalSum((a0 + a2) + (a1 + a3)) : ggmlReduce(a0, a1, a2, a3)
    // A tail under 32 values (none in the models' widths): in order, shown for completeness.
    let tail = tailStart(count)
    for j in i..<count {
        let xj = j < tail ? a.floats[interleavedIndex(j)] : a.floats[j]
        sum += W.load1(row, j) * xj
    }
    return sum
}

/// tinyBLAS's product of a 16-bit row: one accumulator, fused multiply-adds over 8 values at a time, hsum.
@inline(__always)
@inlinable
func dotSixteenBitTiled<W: SixteenBitWeights>(_: W.Type, _ row: UnsafeRawPointer, _ a: ActivationRow, count: Int)
    -> Float
{
    var even = SIMD4<Float>()
    var odd = SIMD4<Float>()
    let x = UnsafeRawPointer(a.floats)
    var i = 0
    while i + 16 <= count {
        let (we, wo) = W.load16(row, i)
        let xe = x.loadUnaligned(fromByteOffset: 4 * i, as: SIMD8<Float>.self)
        let xo = x.loadUnaligned(fromByteOffset: 4 * i + 32, as: SIMD8<Float>.self)
        even = even.addingProduct(we.lowHalf, xe.lowHalf).addingProduct(we.highHalf, xe.highHalf)
        odd = odd.addingProduct(wo.lowHalf, xo.lowHalf).addingProduct(wo.highHalf, xo.highHalf)
        i += 16
    }
    if i + 8 <= count {  // a last 8 values (widths that are multiples of 8 but not 16): in order
        var acc = SIMD8(even[0], odd[0], even[1], odd[1], even[2], odd[2], even[3], odd[3])
        for l in 0..<8 { acc[l] = acc[l].addingProduct(W.load1(row, i + l), a.floats[i + l]) }
        return llamaHorizontalSum(acc)
    }
    return llamaHorizontalSum(SIMD8(even[0], odd[0], even[1], odd[1], even[2], odd[2], even[3], odd[3]))
}

/// Where the activations stop being interleaved in groups of 16 (`interleaveForHalves`).
@inline(__always)
@inlinable
func tailStart(_ count: Int) -> Int { count / 16 * 16 }

/// Where value `j` (in an interleaved group of 16) is stored.
@inline(__always)
@inlinable
func interleavedIndex(_ j: Int) -> Int { j / 16 * 16 + (j % 2 == 0 ? (j % 16) / 2 : 8 + (j % 16) / 2) }

/// Unquantized weights: llamafile's tinyBLAS (`Batched`) takes products of two activation rows or more when the row
/// length is a multiple of 8; ggml_vec_dot (the type's `dot`) the others.
public protocol TinyBLASWeightType: BatchRoundedWeightType {}

extension TinyBLASWeightType {
    @inline(__always)
    @inlinable
    public static func takesBatchedKernel(rows: Int, columns: Int) -> Bool { rows >= 2 && columns % 8 == 0 }
}

/// F32 weights.
public enum F32Rows: TinyBLASWeightType {
    @inlinable public static var traits: WeightTraits {
        WeightTraits(blockValues: 1, blockBytes: 4, activationFormat: .f32)
    }

    /// Dequantizes (copies) `count` F32 weights.
    @inlinable
    public static func dequantizeRow(_ row: UnsafeRawPointer, _ out: UnsafeMutablePointer<Float>, count: Int) {
        for i in 0..<count { out[i] = row.loadUnaligned(fromByteOffset: 4 * i, as: Float.self) }
    }

    public typealias Batched = F32TiledRows

    /// Σ row · activations (F32 weights × F32 activations) as ggml_vec_dot_f32 rounds it.
    @inline(__always)
    @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        var acc = (SIMD8<Float>(), SIMD8<Float>(), SIMD8<Float>(), SIMD8<Float>())
        let x = UnsafeRawPointer(a.floats)
        func product(_ i: Int) -> (SIMD8<Float>, SIMD8<Float>) {
            (
                row.loadUnaligned(fromByteOffset: 4 * i, as: SIMD8<Float>.self),
                x.loadUnaligned(fromByteOffset: 4 * i, as: SIMD8<Float>.self)
            )
        }
        var i = 0
        while i + 32 <= count {
            var (w, v) = product(i)
            acc.0 = acc.0.addingProduct(w, v)
            (w, v) = product(i + 8)
            acc.1 = acc.1.addingProduct(w, v)
            (w, v) = product(i + 16)
            acc.2 = acc.2.addingProduct(w, v)
            (w, v) = product(i + 24)
            acc.3 = acc.3.addingProduct(w, v)
            i += 32
        }
        var sum = ggmlReduce(acc.0, acc.1, acc.2, acc.3)
        while i < count {
            sum = sum.addingProduct(row.loadUnaligned(fromByteOffset: 4 * i, as: Float.self), a.floats[i])
            i += 1
        }
        return sum
    }
}

/// F32 rows as llamafile's tinyBLAS multiplies them (two activation rows or more).
public enum F32TiledRows: RowKernel {
    @inline(__always)
    @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        var acc = SIMD8<Float>()
        let x = UnsafeRawPointer(a.floats)
        var i = 0
        while i + 8 <= count {
            acc = acc.addingProduct(
                row.loadUnaligned(fromByteOffset: 4 * i, as: SIMD8<Float>.self),
                x.loadUnaligned(fromByteOffset: 4 * i, as: SIMD8<Float>.self))
            i += 8
        }
        return llamaHorizontalSum(acc)
    }
}

/// F16 weights.
public enum F16Rows: TinyBLASWeightType {
    @inlinable public static var traits: WeightTraits {
        WeightTraits(blockValues: 1, blockBytes: 2, activationFormat: .f16)
    }

    /// Dequantizes `count` F16 weights.
    @inlinable
    public static func dequantizeRow(_ row: UnsafeRawPointer, _ out: UnsafeMutablePointer<Float>, count: Int) {
        for i in 0..<count { out[i] = halfToFloat(row.loadUnaligned(fromByteOffset: 2 * i, as: UInt16.self)) }
    }

    public typealias Batched = F16TiledRows

    /// Σ row · activations (F16 weights × half-rounded activations in even/odd order) as ggml_vec_dot_f16 rounds it.
    @inline(__always)
    @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        dotSixteenBitSingle(F16Weights.self, row, a, count: count, bf16Reduction: false)
    }
}

/// F16 weights sixteen at a time.
public enum F16Weights: SixteenBitWeights {
    @inline(__always)
    @inlinable
    public static func load16(_ row: UnsafeRawPointer, _ offset: Int) -> (even: SIMD8<Float>, odd: SIMD8<Float>) {
        let pairs = row.loadUnaligned(fromByteOffset: 2 * offset, as: SIMD8<UInt32>.self)
        return (halvesToFloats(pairs & 0xFFFF), halvesToFloats(pairs &>> 16))
    }

    @inline(__always)
    @inlinable
    public static func load1(_ row: UnsafeRawPointer, _ offset: Int) -> Float {
        halfToFloat(row.loadUnaligned(fromByteOffset: 2 * offset, as: UInt16.self))
    }
}

/// F16 rows as llamafile's tinyBLAS multiplies them (two activation rows or more).
public enum F16TiledRows: RowKernel {
    @inline(__always)
    @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        dotSixteenBitTiled(F16Weights.self, row, a, count: count)
    }
}

/// BF16 weights.
public enum BF16Rows: TinyBLASWeightType {
    @inlinable public static var traits: WeightTraits {
        WeightTraits(blockValues: 1, blockBytes: 2, activationFormat: .bf16)
    }

    /// Dequantizes `count` BF16 weights.
    @inlinable
    public static func dequantizeRow(_ row: UnsafeRawPointer, _ out: UnsafeMutablePointer<Float>, count: Int) {
        for i in 0..<count { out[i] = bfloat16ToFloat(row.loadUnaligned(fromByteOffset: 2 * i, as: UInt16.self)) }
    }

    public typealias Batched = BF16TiledRows

    /// Σ row · activations (BF16 weights × bfloat16-rounded activations in even/odd order) as ggml_vec_dot_bf16
    /// rounds it.
    @inline(__always)
    @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        dotSixteenBitSingle(BF16Weights.self, row, a, count: count, bf16Reduction: true)
    }
}

/// BF16 weights sixteen at a time.
public enum BF16Weights: SixteenBitWeights {
    @inline(__always)
    @inlinable
    public static func load16(_ row: UnsafeRawPointer, _ offset: Int) -> (even: SIMD8<Float>, odd: SIMD8<Float>) {
        let pairs = row.loadUnaligned(fromByteOffset: 2 * offset, as: SIMD8<UInt32>.self)
        return (
            unsafeBitCast(pairs &<< 16, to: SIMD8<Float>.self),
            unsafeBitCast(pairs & 0xFFFF_0000, to: SIMD8<Float>.self)
        )
    }

    @inline(__always)
    @inlinable
    public static func load1(_ row: UnsafeRawPointer, _ offset: Int) -> Float {
        bfloat16ToFloat(row.loadUnaligned(fromByteOffset: 2 * offset, as: UInt16.self))
    }
}

/// BF16 rows as llamafile's tinyBLAS multiplies them (two activation rows or more).
public enum BF16TiledRows: RowKernel {
    @inline(__always)
    @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        dotSixteenBitTiled(BF16Weights.self, row, a, count: count)
    }
}
