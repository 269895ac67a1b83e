/// Barcode text whose line feeds a Windows program turned into CR LF, as scanners in keyboard mode deliver it to
/// Windows applications: `@` CR LF RS CR `ANSI ` …, each element ending in CR LF. Every LF follows a CR, so the
/// text is read with those CRs removed (then every directory offset and length holds again), and each element's
/// and subfile's offset is reported in the text as given (an error's, like its message, in the text as read).
struct AAMVAWindowsLineEndings {
    /// The payload with the CR of every CR LF removed.
    let bytes: [UInt8]
    /// Where each LF whose CR was removed lies in `bytes`, ascending.
    private let lineFeeds: [Int]

    private static let carriageReturn: UInt8 = 0x0D
    private static let lineFeed: UInt8 = 0x0A

    /// Nil unless the header's element separator is CR LF (`@` CR LF) and every LF of `payload` follows a CR.
    init?(_ payload: [UInt8]) {
        guard payload.count > 3, payload[0] == UInt8(ascii: "@"), payload[1] == Self.carriageReturn,
            payload[2] == Self.lineFeed
        else { return nil }
        var bytes: [UInt8] = []
        var lineFeeds: [Int] = []
        bytes.reserveCapacity(payload.count)
        for (i, byte) in payload.enumerated() {
            let next = i + 1 < payload.count ? payload[i + 1] : nil
            if byte == Self.carriageReturn, next == Self.lineFeed { continue }
            if byte == Self.lineFeed {
                guard i > 0, payload[i - 1] == Self.carriageReturn else { return nil }
                lineFeeds.append(bytes.count)
            }
            bytes.append(byte)
        }
        self.bytes = bytes
        self.lineFeeds = lineFeeds
    }

    /// The note the barcode carries.
    var warning: String {
        "the text has CR LF line endings (\(lineFeeds.count) of them, as Windows programs write them): read with "
            + "LF, the element separator; byte offsets count the text as given"
    }

    /// Where byte `offset` of `bytes` lies in the payload as given: after one removed CR per LF up to it.
    func originalOffset(_ offset: Int) -> Int {
        var low = 0
        var high = lineFeeds.count
        while low < high {
            let mid = (low + high) / 2
            if lineFeeds[mid] <= offset { low = mid + 1 } else { high = mid }
        }
        return offset + low
    }

    /// `barcode` (read from `bytes`) with its offsets in the payload as given and the line endings noted.
    func restoringOffsets(_ barcode: AAMVABarcode) -> AAMVABarcode {
        let subfiles = barcode.subfiles.map { subfile in
            AAMVASubfile(
                type: subfile.type, offset: originalOffset(subfile.offset),
                elements: subfile.elements.map {
                    AAMVAElement(id: $0.id, value: $0.value, offset: originalOffset($0.offset))
                })
        }
        return AAMVABarcode(
            header: barcode.header, directory: barcode.directory, subfiles: subfiles,
            warnings: [warning] + barcode.warnings, country: barcode.country, dates: barcode.dates)
    }
}
