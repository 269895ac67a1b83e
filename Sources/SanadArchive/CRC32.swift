/// CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320), as zlib computes it, eight bytes a step
/// (slicing-by-8).
public struct CRC32 {
    public private(set) var value: UInt32 = 0xFFFF_FFFF

    /// Tables for slicing-by-8: `tables[k][b]` is the CRC of byte b followed by k zero bytes.
    private static let tables: [[UInt32]] = {
        var t = [[UInt32]](repeating: [UInt32](repeating: 0, count: 256), count: 8)
        for b in 0..<256 {
            var c = UInt32(b)
            for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
            t[0][b] = c
        }
        for b in 0..<256 {
            for k in 1..<8 { t[k][b] = (t[k - 1][b] >> 8) ^ t[0][Int(t[k - 1][b] & 0xFF)] }
        }
        return t
    }()

    public init() {}

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var c = value
        var i = 0
        let n = bytes.count
        Self.tables.withUnsafeBufferPointer { t in
            let t0 = t[0]
            let t1 = t[1]
            let t2 = t[2]
            let t3 = t[3]
            let t4 = t[4]
            let t5 = t[5]
            let t6 = t[6]
            let t7 = t[7]
            while i + 8 <= n {
                let lo = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: i, as: UInt32.self)) ^ c
                let hi = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: i + 4, as: UInt32.self))
                c =
                    t7[Int(lo & 0xFF)] ^ t6[Int((lo >> 8) & 0xFF)] ^ t5[Int((lo >> 16) & 0xFF)] ^ t4[Int(lo >> 24)]
                    ^ t3[Int(hi & 0xFF)] ^ t2[Int((hi >> 8) & 0xFF)] ^ t1[Int((hi >> 16) & 0xFF)] ^ t0[Int(hi >> 24)]
                i += 8
            }
            while i < n {
                c = t0[Int((c ^ UInt32(bytes[i])) & 0xFF)] ^ (c >> 8)
                i += 1
            }
        }
        value = c
    }

    /// The CRC of `bytes`.
    public static func of(_ bytes: [UInt8]) -> UInt32 {
        var c = CRC32()
        bytes.withUnsafeBytes { c.update($0) }
        return c.checksum
    }

    public var checksum: UInt32 { value ^ 0xFFFF_FFFF }
}
