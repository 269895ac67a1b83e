// Q4_1 weights repacked at load time for the integer kernels ("paired" layout). A row keeps its 20 bytes per block
// but regroups them: first the nibbles of block pairs, 32 bytes per pair, then the row's half scales d (one per
// block), then its half offsets m. Rows with an even number of blocks only.
//
// Byte j of the 32 bytes of the pair (2p, 2p+1) holds weight j of block 2p in its low nibble and weight j of
// block 2p+1 in its high nibble. One 32-byte load and a mask then give a block's 32 weights in order, one per byte
// (what x86's `pmaddubsw` multiplies: ISA/AVX2/Q4_1PairedAVX2.swift), and a shift the other block's; read as
// sixteen 16-bit lanes, masks and shifts give each block's even and odd weights (`nibbleLaneFloats`'s operands).
// Either way it is about a third of the work of unpacking ggml's layout, and the scales of a run of blocks convert
// and multiply eight at a time ahead of the block loop. The products are rounded exactly as `Q4_1Rows.dot`'s
// (llama.cpp's) are.

/// Whether a Q4_1 row of `columns` values can take the paired layout (an even number of blocks).
@inlinable
public func q4_1PairedLayoutFits(columns: Int) -> Bool { columns % 64 == 0 }

/// Writes the Q4_1 row at `source` (`blocks` blocks, an even number, in ggml's layout) to `destination` in the
/// paired layout (the same number of bytes).
@inlinable
public func repackRowQ4_1Paired(_ source: UnsafeRawPointer, _ destination: UnsafeMutableRawPointer, blocks: Int) {
    // Byte j of a block's nibbles holds weight j (low nibble) and j+16 (high).
    for p in 0..<blocks / 2 {
        let first = (source + 2 * p * q4_1BlockBytes + 4).loadUnaligned(as: SIMD16<UInt8>.self)
        let second = (source + (2 * p + 1) * q4_1BlockBytes + 4).loadUnaligned(as: SIMD16<UInt8>.self)
        let out = destination + p * 32
        out.storeBytes(of: (first & 0x0F) | (second &<< 4), as: SIMD16<UInt8>.self)
        (out + 16).storeBytes(of: (first &>> 4) | (second & 0xF0), as: SIMD16<UInt8>.self)
    }
    let scales = destination + blocks * 16
    let offsets = scales + blocks * 2
    for b in 0..<blocks {
        let block = source + b * q4_1BlockBytes
        (scales + 2 * b).storeBytes(of: block.loadUnaligned(as: UInt16.self), as: UInt16.self)
        (offsets + 2 * b).storeBytes(of: block.loadUnaligned(fromByteOffset: 2, as: UInt16.self), as: UInt16.self)
    }
}

/// The offset m of block `block` of a paired-layout row of `blocks` blocks.
@inlinable
public func q4_1PairedOffset(_ row: UnsafeRawPointer, block: Int, blocks: Int) -> Float {
    loadHalf(row, blocks * 18 + 2 * block)
}

/// Blocks per run whose scales are converted ahead of the block loop (bounds the scratch on the stack).
@inlinable public var pairedRunBlocks: Int { 32 }

/// `out[i] = d_i · scales[i]` for the `count` half scales d at `halves` (eight at a time, then one by one).
@inline(__always)
@inlinable
public func scaleProducts(
    _ halves: UnsafeRawPointer, _ scales: UnsafePointer<Float>, count: Int, into out: UnsafeMutablePointer<Float>
) {
    var i = 0
    while i + 8 <= count {
        let products = loadHalves8(halves + 2 * i) * UnsafeRawPointer(scales + i).loadUnaligned(as: SIMD8<Float>.self)
        UnsafeMutableRawPointer(out + i).storeBytes(of: products, as: SIMD8<Float>.self)
        i += 8
    }
    while i < count {
        out[i] = convertHalf(halves, 2 * i) * scales[i]
        i += 1
    }
}

/// How a kernel build multiplies the blocks of a paired-layout row: the unpacked form of a block pair, and the
/// eight lane sums of one of its blocks with the activations (ggml's grouping: lane l sums elements 4l…4l+3).
/// `dotQ4_1Paired` is generic over it so that each build runs the same loop, and so the same roundings, with its
/// own block products: `PortableQ4_1Pairs` here, byte products in the x86 builds (ISA/AVX2/Q4_1PairedX86.swift).
public protocol Q4_1PairProducts {
    associatedtype Pair
    /// Block pair `pair` of the paired-layout row at `row`.
    static func unpack(_ row: UnsafeRawPointer, pair: Int) -> Pair
    /// The lane sums of the pair's first (`second` false) or second block with block `block` of `a`, as floats.
    static func laneSums(_ pair: Pair, second: Bool, _ a: ActivationRow, block: Int) -> SIMD8<Float>
}

/// Block products in 16-bit lanes, for any CPU.
public enum PortableQ4_1Pairs: Q4_1PairProducts {
    /// The even and odd weights of the first block, then of the second, as 16-bit lanes.
    public typealias Pair = (SIMD16<Int16>, SIMD16<Int16>, SIMD16<Int16>, SIMD16<Int16>)

    @inline(__always) @inlinable
    public static func unpack(_ row: UnsafeRawPointer, pair: Int) -> Pair { unpackQ4_1Pair(row, pair: pair) }

    @inline(__always) @inlinable
    public static func laneSums(_ pair: Pair, second: Bool, _ a: ActivationRow, block: Int) -> SIMD8<Float> {
        second
            ? nibbleLaneFloats(pair.2, pair.3, a.pairs + block * 32)
            : nibbleLaneFloats(pair.0, pair.1, a.pairs + block * 32)
    }
}

/// Block pair `pair` of a paired-layout row: the even and odd weights of its first block, then of its second, as
/// 16-bit lanes.
@inline(__always)
@inlinable
func unpackQ4_1Pair(_ row: UnsafeRawPointer, pair: Int)
    -> (SIMD16<Int16>, SIMD16<Int16>, SIMD16<Int16>, SIMD16<Int16>)
{
    // Lane i holds bytes 2i and 2i+1: weights 2i and 2i+1 of the first block in bits 0–3 and 8–11, of the second
    // in bits 4–7 and 12–15.
    let v = (row + pair * 32).loadUnaligned(as: SIMD16<UInt16>.self)
    return (
        unsafeBitCast(v & 0x000F, to: SIMD16<Int16>.self), unsafeBitCast((v &>> 8) & 0x000F, to: SIMD16<Int16>.self),
        unsafeBitCast((v &>> 4) & 0x000F, to: SIMD16<Int16>.self), unsafeBitCast(v &>> 12, to: SIMD16<Int16>.self)
    )
}

/// `Q4_1Rows.dot` for a paired-layout row: the same value, bit for bit, with `products`' block products.
@inline(__always)
@inlinable
public func dotQ4_1Paired<P: Q4_1PairProducts>(
    _ row: UnsafeRawPointer, _ a: ActivationRow, count: Int, products: P.Type = PortableQ4_1Pairs.self
) -> Float {
    let blocks = count / 32
    return withUnsafeTemporaryAllocation(of: Float.self, capacity: 2 * pairedRunBlocks) { scratch in
        let ds = scratch.baseAddress!
        let ms = ds + pairedRunBlocks
        var acc = SIMD8<Float>()
        var offsets: Float = 0
        var start = 0
        while start < blocks {
            let run = min(pairedRunBlocks, blocks - start)
            scaleProducts(row + blocks * 16 + 2 * start, a.scales + start, count: run, into: ds)
            halvesToFloats((row + blocks * 18 + 2 * start).assumingMemoryBound(to: UInt16.self), ms, count: run)
            for k in stride(from: 0, to: run, by: 2) {
                let pair = P.unpack(row, pair: (start + k) / 2)
                for half in 0..<2 {
                    let b = start + k + half
                    offsets = offsets.addingProduct(ms[k + half], a.sums[b])
                    acc = acc.addingProduct(
                        SIMD8(repeating: ds[k + half]), P.laneSums(pair, second: half == 1, a, block: b))
                }
            }
            start += run
        }
        return llamaHorizontalSum(acc) + offsets
    }
}

/// `Q4_1Rows.dot4` for a paired-layout row: four activation rows, `rowStride` values apart, each product bit for bit
/// `Q4_1Rows.dot`'s.
@inline(__always)
@inlinable
public func dot4Q4_1Paired(_ row: UnsafeRawPointer, _ a: ActivationRow, rowStride: Int, count: Int) -> SIMD4<Float> {
    let blocks = count / 32
    let scaleStride = rowStride / 32
    return withUnsafeTemporaryAllocation(of: Float.self, capacity: 5 * pairedRunBlocks) { scratch in
        let ds = scratch.baseAddress!
        let ms = ds + 4 * pairedRunBlocks
        var acc0 = SIMD8<Float>()
        var acc1 = SIMD8<Float>()
        var acc2 = SIMD8<Float>()
        var acc3 = SIMD8<Float>()
        var offsets = SIMD4<Float>()
        var start = 0
        while start < blocks {
            let run = min(pairedRunBlocks, blocks - start)
            for r in 0..<4 {
                scaleProducts(
                    row + blocks * 16 + 2 * start, a.scales + r * scaleStride + start, count: run,
                    into: ds + r * pairedRunBlocks)
            }
            halvesToFloats((row + blocks * 18 + 2 * start).assumingMemoryBound(to: UInt16.self), ms, count: run)
            for k in stride(from: 0, to: run, by: 2) {
                let (even0, odd0, even1, odd1) = unpackQ4_1Pair(row, pair: (start + k) / 2)
                for half in 0..<2 {
                    let (even, odd) = half == 0 ? (even0, odd0) : (even1, odd1)
                    let j = k + half
                    let b = start + j
                    let pairs = a.pairs + b * 32
                    acc0 = acc0.addingProduct(SIMD8(repeating: ds[j]), nibbleLaneFloats(even, odd, pairs))
                    acc1 = acc1.addingProduct(
                        SIMD8(repeating: ds[pairedRunBlocks + j]), nibbleLaneFloats(even, odd, pairs + rowStride))
                    acc2 = acc2.addingProduct(
                        SIMD8(repeating: ds[2 * pairedRunBlocks + j]),
                        nibbleLaneFloats(even, odd, pairs + 2 * rowStride))
                    acc3 = acc3.addingProduct(
                        SIMD8(repeating: ds[3 * pairedRunBlocks + j]),
                        nibbleLaneFloats(even, odd, pairs + 3 * rowStride))
                    let s = SIMD4(
                        a.sums[b], a.sums[scaleStride + b], a.sums[2 * scaleStride + b], a.sums[3 * scaleStride + b])
                    offsets = offsets.addingProduct(SIMD4(repeating: ms[j]), s)
                }
            }
            start += run
        }
        return SIMD4(
            llamaHorizontalSum(acc0), llamaHorizontalSum(acc1), llamaHorizontalSum(acc2), llamaHorizontalSum(acc3))
            + offsets
    }
}

/// Q4_1 weights in the paired layout (`WeightLayout.q4_1Paired`).
public enum Q4_1PairedRows: WeightType {
    @inlinable public static var traits: WeightTraits {
        WeightTraits(blockValues: 32, blockBytes: q4_1BlockBytes, activationFormat: .q8_1)
    }

    @inline(__always)
    @inlinable
    public static func dot(_ row: UnsafeRawPointer, _ a: ActivationRow, count: Int) -> Float {
        dotQ4_1Paired(row, a, count: count)
    }

    @inline(__always)
    @inlinable
    public static func dot4(_ row: UnsafeRawPointer, _ a: ActivationRow, rowStride: Int, count: Int) -> SIMD4<Float> {
        dot4Q4_1Paired(row, a, rowStride: rowStride, count: count)
    }

    /// Dequantizes `count` (a multiple of 64) weights of a paired-layout row into `out`.
    @inlinable
    public static func dequantizeRow(_ row: UnsafeRawPointer, _ out: UnsafeMutablePointer<Float>, count: Int) {
        let blocks = count / 32
        for p in 0..<blocks / 2 {
            let bytes = (row + p * 32).assumingMemoryBound(to: UInt8.self)
            for k in 0..<2 {
                let b = 2 * p + k
                let d = loadHalf(row, blocks * 16 + 2 * b)
                let m = loadHalf(row, blocks * 18 + 2 * b)
                for j in 0..<32 { out[b * 32 + j] = Float((bytes[j] &>> (4 * k)) & 0x0F) * d + m }
            }
        }
    }
}
