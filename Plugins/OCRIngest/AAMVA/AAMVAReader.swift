import Foundation
import SanadCore

/// Reads the text a barcode scanner returns for the PDF417 symbol on a North American driver licence or ID card.
///
/// Layout (AAMVA DL/ID card design standard, Annex D): `@`, the data element separator, the record separator and
/// the segment terminator; `ANSI `; the 6-digit IIN; the 2-digit AAMVA version; the 2-digit jurisdiction version
/// (versions 2+); the 2-digit number of entries; one 10-byte directory entry per subfile (type, 4-digit offset,
/// 4-digit length); then the subfiles: the type (`DL`, `ID`, `Z?`) and its elements, each a 3-character id and a
/// value, separated by the data element separator and ended by the segment terminator.
public enum AAMVAReader {
    private static let at = UInt8(ascii: "@")

    /// Parses `payload`. Throws `OCRIngestError.aamva` naming the byte offset and the element (or header part)
    /// when the payload is truncated or malformed.
    public static func read(_ payload: String) throws -> AAMVABarcode {
        try read(bytes: Array(payload.utf8))
    }

    /// Parses the payload's bytes: strictly, and when that fails, leniently (see `read(bytes:lenient:)`); the strict
    /// error is thrown when the lenient reading fails too.
    public static func read(bytes: [UInt8]) throws -> AAMVABarcode {
        do { return try read(bytes: bytes, lenient: false) } catch {
            guard let lenient = try? read(bytes: bytes, lenient: true) else { throw error }
            return lenient
        }
    }

    /// Parses the payload's bytes. `lenient` reads what scanners deliver, each deviation a warning starting
    /// `lenient:`: a subfile whose element separators were stripped is split at the element ids it holds (three or
    /// more known ids needed); a missing segment terminator is tolerated when the payload reaches the directory's
    /// declared end (its lengths are checked, not trusted); an element that does not start with an id is skipped.
    /// Text with CR LF line endings (Windows) is read with LF, in either mode, noted in a warning (see
    /// `AAMVAWindowsLineEndings`).
    public static func read(bytes: [UInt8], lenient: Bool) throws -> AAMVABarcode {
        guard let windows = AAMVAWindowsLineEndings(bytes) else { return try readPayload(bytes, lenient: lenient) }
        do {
            return windows.restoringOffsets(try readPayload(windows.bytes, lenient: lenient))
        } catch OCRIngestError.aamva(let offset, let element, let message) {
            // The message's byte numbers and the offset agree: both count the text as read.
            throw OCRIngestError.aamva(
                offset: offset, element: element,
                message: message + " (byte offsets count the text with the CR of each CR LF removed)")
        }
    }

    private static func readPayload(_ bytes: [UInt8], lenient: Bool) throws -> AAMVABarcode {
        var warnings: [String] = []
        guard let first = bytes.first else {
            throw OCRIngestError.aamva(offset: 0, element: "compliance indicator", message: "the payload is empty")
        }
        guard first == at else {
            throw OCRIngestError.aamva(
                offset: 0, element: "compliance indicator",
                message: "expected '@' (0x40), found \(describe(first)); this is not AAMVA barcode text")
        }
        // The file type follows the three separators; scanners sometimes strip control characters.
        guard
            let fileTypeAt = (1...4).first(where: { matches(bytes, at: $0, "ANSI ") || matches(bytes, at: $0, "AAMVA") }
            )
        else {
            throw OCRIngestError.aamva(
                offset: 4, element: "file type",
                message: "expected 'ANSI ' after '@' and the three separator bytes, found \(describeRange(bytes, 4, 5))"
                    + (bytes.count < 9 ? " (the payload ends at byte \(bytes.count): truncated)" : ""))
        }
        let separators = Array(bytes[1..<fileTypeAt])
        if separators.count != 3 {
            warnings.append(
                "the header has \(separators.count) separator byte(s) instead of 3 (a scanner stripped control "
                    + "characters); directory offsets shifted by \(fileTypeAt - 4)")
        }
        // Three separators: use them as declared. Fewer: recognise the usual bytes, assume the rest.
        let declared = separators.count == 3
        let elementSeparator = declared ? separators[0] : (separators.first { $0 == 0x0A } ?? 0x0A)
        let recordSeparator = declared ? separators[1] : UInt8(0x1E)
        let segmentTerminator = declared ? separators[2] : (separators.first { $0 == 0x0D } ?? 0x0D)
        var cursor = fileTypeAt + 5
        let iin = try digits(bytes, &cursor, 6, "IIN")
        let version = try number(bytes, &cursor, 2, "AAMVA version")
        let jurisdictionVersion = version >= 2 ? try number(bytes, &cursor, 2, "jurisdiction version") : nil
        let entries = try number(bytes, &cursor, 2, "number of entries")
        guard entries >= 1 else {
            throw OCRIngestError.aamva(
                offset: cursor - 2, element: "number of entries", message: "the header declares no subfile")
        }
        let header = AAMVAHeader(
            complianceIndicator: "@", dataElementSeparator: elementSeparator, recordSeparator: recordSeparator,
            segmentTerminator: segmentTerminator,
            fileType: String(decoding: bytes[fileTypeAt..<(fileTypeAt + 5)], as: UTF8.self),
            iin: iin, version: version, jurisdictionVersion: jurisdictionVersion, numberOfEntries: entries)

        var directory: [AAMVASubfileEntry] = []
        for index in 0..<entries {
            let label = "subfile directory entry \(index + 1)"
            guard cursor + 10 <= bytes.count else {
                throw OCRIngestError.aamva(
                    offset: cursor, element: label,
                    message: "the payload ends at byte \(bytes.count), inside the subfile directory (truncated)")
            }
            let type = bytes[cursor..<(cursor + 2)]
            guard type.allSatisfy({ $0 >= 65 && $0 <= 90 }) else {
                throw OCRIngestError.aamva(
                    offset: cursor, element: label,
                    message:
                        "subfile type must be two capital letters (DL, ID, Z?), found \(describeRange(bytes, cursor, 2))"
                )
            }
            cursor += 2
            let offset = try number(bytes, &cursor, 4, "\(label) offset")
            let length = try number(bytes, &cursor, 4, "\(label) length")
            directory.append(
                AAMVASubfileEntry(type: String(decoding: type, as: UTF8.self), offset: offset, length: length))
        }

        let shift = fileTypeAt - 4
        var subfiles: [AAMVASubfile] = []
        for entry in directory {
            let subfile = try readSubfile(
                entry, bytes: bytes, shift: shift, directoryEnd: cursor, elementSeparator: elementSeparator,
                segmentTerminator: segmentTerminator, lenient: lenient, warnings: &warnings)
            subfiles.append(subfile)
        }
        guard let primary = subfiles.first(where: { $0.type == "DL" || $0.type == "ID" }) else {
            throw OCRIngestError.aamva(
                offset: cursor, element: "subfile directory",
                message: "no DL or ID subfile (found \(directory.map(\.type).joined(separator: ", ")))")
        }
        let country = issuerCountry(primary, iin: iin)
        var dates: [String: CivilDate] = [:]
        for element in primary.elements where AAMVAElementIDs.dates.contains(element.id) {
            let value = element.value.trimmingCharacters(in: .whitespaces)
            if value.isEmpty { continue }
            dates[element.id] = try readDate(element, value: value, version: version, country: country)
        }
        warnings += missingMandatory(primary, version: version)
        return AAMVABarcode(
            header: header, directory: directory, subfiles: subfiles, warnings: warnings, country: country,
            dates: dates)
    }

    private static func readSubfile(
        _ entry: AAMVASubfileEntry, bytes: [UInt8], shift: Int, directoryEnd: Int, elementSeparator: UInt8,
        segmentTerminator: UInt8, lenient: Bool, warnings: inout [String]
    ) throws -> AAMVASubfile {
        let declared = max(0, entry.offset + shift)
        var start = declared
        if !matches(bytes, at: declared, entry.type) {
            // Tolerate a wrong offset when the subfile type is found right after the directory or near the offset.
            let near = (max(directoryEnd, declared - 8)...max(directoryEnd, declared + 8)).first {
                matches(bytes, at: $0, entry.type)
            }
            let afterDirectory = matches(bytes, at: directoryEnd, entry.type) ? directoryEnd : nil
            // Lenient: stripped separators move later subfiles by more than 8 bytes; take the type's first place.
            let anywhere =
                lenient
                ? (directoryEnd..<max(directoryEnd, bytes.count)).first { matches(bytes, at: $0, entry.type) } : nil
            guard let found = near ?? afterDirectory ?? anywhere else {
                if declared >= bytes.count {
                    throw OCRIngestError.aamva(
                        offset: declared, element: "subfile \(entry.type)",
                        message: "the directory places it at byte \(entry.offset) but the payload ends at byte "
                            + "\(bytes.count) (truncated)")
                }
                throw OCRIngestError.aamva(
                    offset: declared, element: "subfile \(entry.type)",
                    message: "expected '\(entry.type)' at the directory's offset \(entry.offset), found "
                        + "\(describeRange(bytes, declared, 2))")
            }
            warnings.append("subfile \(entry.type) found at byte \(found), the directory says \(entry.offset)")
            start = found
        }
        var cursor = start + 2
        let terminator: Int?
        if segmentTerminator == elementSeparator {
            // Both line endings became CR LF (read as LF): only the directory's length tells where the subfile ends.
            let declaredEnd = start + entry.length - 1
            terminator =
                declaredEnd >= cursor && declaredEnd < bytes.count && bytes[declaredEnd] == segmentTerminator
                ? declaredEnd : nil
        } else {
            terminator = bytes[cursor...].firstIndex(of: segmentTerminator)
        }
        if let elements = splitAtIDs(bytes, cursor..<(terminator ?? bytes.count), separator: elementSeparator) {
            guard lenient else {
                throw OCRIngestError.aamva(
                    offset: cursor, element: "subfile \(entry.type)",
                    message: "\(elements.count) element ids follow each other with no element separator (0x"
                        + "\(String(elementSeparator, radix: 16, uppercase: true))) between them: the scanner stripped "
                        + "them")
            }
            warnings.append(
                "lenient: subfile \(entry.type) has no element separators; \(elements.count) elements found by their "
                    + "ids")
            return AAMVASubfile(type: entry.type, offset: start, elements: elements)
        }
        let reachesDeclaredEnd = bytes.count >= start + entry.length - 1
        if lenient, terminator == nil, reachesDeclaredEnd {
            warnings.append(
                "lenient: subfile \(entry.type) has no segment terminator; read to the end of the payload (byte "
                    + "\(bytes.count))")
        }
        guard let end = terminator ?? (lenient && reachesDeclaredEnd ? bytes.count : nil) else {
            let declaredEnd = start + entry.length
            let lastElement = lastElementStart(bytes, from: cursor, separator: elementSeparator)
            let id = lastElement.map { describeRange(bytes, $0, 3) } ?? "(none)"
            throw OCRIngestError.aamva(
                offset: lastElement ?? cursor, element: "subfile \(entry.type), element \(id)",
                message: "the payload ends at byte \(bytes.count) before the segment terminator (0x"
                    + "\(String(segmentTerminator, radix: 16, uppercase: true))); the directory declares the subfile "
                    + "to end at byte \(declaredEnd): the barcode text is truncated")
        }
        if end + 1 - start != entry.length {
            warnings.append(
                "subfile \(entry.type) is \(end + 1 - start) bytes long, the directory declares \(entry.length)")
        }
        var elements: [AAMVAElement] = []
        while cursor < end {
            let stop = bytes[cursor..<end].firstIndex(of: elementSeparator) ?? end
            // Some scanners turn LF into CR LF; a stray CR before the separator is not part of the value.
            let piece = bytes[cursor..<stop]
            if !piece.isEmpty {
                guard piece.count >= 3,
                    piece.prefix(3).allSatisfy({ ($0 >= 65 && $0 <= 90) || ($0 >= 48 && $0 <= 57) }),
                    let lead = piece.first, lead >= 65, lead <= 90
                else {
                    if lenient {
                        warnings.append(
                            "lenient: subfile \(entry.type): skipped \(describeRange(bytes, cursor, min(3, piece.count))) "
                                + "at byte \(cursor), which does not start with an element id")
                        cursor = stop + 1
                        continue
                    }
                    throw OCRIngestError.aamva(
                        offset: cursor, element: "subfile \(entry.type), element \(elements.count + 1)",
                        message: "an element starts with a three-character id (DAQ, DCS, …), found "
                            + "\(describeRange(bytes, cursor, min(3, piece.count)))"
                            + (elements.last.map { " after element \($0.id)" } ?? ""))
                }
                let id = String(decoding: piece.prefix(3), as: UTF8.self)
                let value = String(decoding: piece.dropFirst(3), as: UTF8.self)
                if elements.contains(where: { $0.id == id }) {
                    warnings.append("subfile \(entry.type): element \(id) repeats at byte \(cursor); the first is used")
                }
                elements.append(AAMVAElement(id: id, value: value, offset: cursor))
            }
            cursor = stop + 1
        }
        return AAMVASubfile(type: entry.type, offset: start, elements: elements)
    }

    /// The elements of `range` split at the known element ids it holds, when it has no separator, starts with an id
    /// and holds three or more distinct ones; nil otherwise. Each id counts once; where ids overlap the later wins.
    /// A value that holds an id's letters can still be split wrongly: the result is a lenient reading, so noted.
    static func splitAtIDs(_ bytes: [UInt8], _ range: Range<Int>, separator: UInt8) -> [AAMVAElement]? {
        guard range.count >= 3, !bytes[range].contains(separator) else { return nil }
        func id(at i: Int) -> String? {
            guard i + 3 <= range.upperBound else { return nil }
            let text = String(decoding: bytes[i..<(i + 3)], as: UTF8.self)
            return AAMVAElementIDs.names[text] != nil ? text : nil
        }
        guard id(at: range.lowerBound) != nil else { return nil }
        var starts: [(Int, String)] = []
        var seen = Set<String>()
        var i = range.lowerBound
        func fresh(_ at: Int) -> String? { id(at: at).flatMap { seen.contains($0) ? nil : $0 } }
        while i < range.upperBound {
            // Of overlapping ids (`DCADDCBK`, `RICHMONDDAJ`) the later one starts the element: a value's last
            // letters run into it. The first element's id is taken as it is.
            let overlapped = !starts.isEmpty && (fresh(i + 1) != nil || fresh(i + 2) != nil)
            if let found = fresh(i), !overlapped {
                starts.append((i, found))
                seen.insert(found)
                i += 3
            } else {
                i += 1
            }
        }
        guard starts.count >= 3 else { return nil }
        return starts.enumerated().map { n, start in
            let valueEnd = n + 1 < starts.count ? starts[n + 1].0 : range.upperBound
            let value = String(decoding: bytes[(start.0 + 3)..<valueEnd], as: UTF8.self)
            return AAMVAElement(id: start.1, value: value, offset: start.0)
        }
    }

    private static func lastElementStart(_ bytes: [UInt8], from: Int, separator: UInt8) -> Int? {
        guard from < bytes.count else { return nil }
        if let last = bytes[from...].lastIndex(of: separator) { return last + 1 < bytes.count ? last + 1 : nil }
        return from
    }

    /// DCG, else a Canadian DAJ, else the IIN; US when nothing says otherwise.
    private static func issuerCountry(_ subfile: AAMVASubfile, iin: String) -> AAMVAJurisdictions.Country {
        if let dcg = subfile["DCG"], let country = AAMVAJurisdictions.Country(rawValue: dcg) { return country }
        if let daj = subfile["DAJ"], AAMVAJurisdictions.canadianCodes.contains(daj) { return .canada }
        return AAMVAJurisdictions.byIIN[iin]?.country ?? .usa
    }

    /// US issuers write MMDDCCYY and Canadian ones CCYYMMDD (versions 2+); version 0/1 cards write CCYYMMDD.
    private static func readDate(
        _ element: AAMVAElement, value: String, version: Int, country: AAMVAJurisdictions.Country
    ) throws -> CivilDate {
        let yearFirst = version <= 1 || country == .canada
        let order = yearFirst ? "CCYYMMDD" : "MMDDCCYY"
        let digits = Array(value.utf8)
        func field(_ range: Range<Int>) -> Int? { Int(String(decoding: digits[range], as: UTF8.self)) }
        guard digits.count == 8, digits.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
            throw OCRIngestError.aamva(
                offset: element.offset, element: element.id,
                message: "'\(value)' is not an 8-digit \(order) date (\(AAMVAElementIDs.names[element.id] ?? "date"))")
        }
        let (y, m, d) =
            yearFirst ? (field(0..<4), field(4..<6), field(6..<8)) : (field(4..<8), field(0..<2), field(2..<4))
        guard let y, let m, let d, let date = CivilDate(year: y, month: m, day: d) else {
            throw OCRIngestError.aamva(
                offset: element.offset, element: element.id,
                message: "'\(value)' is not a calendar date in the \(order) order of a \(country.rawValue) issuer")
        }
        return date
    }

    private static func missingMandatory(_ subfile: AAMVASubfile, version: Int) -> [String] {
        var required = version >= 4 ? AAMVAElementIDs.mandatoryV4 : AAMVAElementIDs.mandatoryCore
        if subfile.type == "ID" { required.removeAll { ["DCA", "DCB", "DCD"].contains($0) } }
        var missing = required.filter { id in !subfile.elements.contains { $0.id == id } }
        if version < 4, !subfile.elements.contains(where: { ["DAA", "DAB", "DCS"].contains($0.id) }) {
            missing.append("DAA/DAB/DCS (name)")
        }
        return missing.isEmpty
            ? [] : ["subfile \(subfile.type) lacks mandatory element(s) \(missing.joined(separator: ", "))"]
    }

    // MARK: bytes

    private static func matches(_ bytes: [UInt8], at offset: Int, _ text: String) -> Bool {
        let needle = Array(text.utf8)
        guard offset >= 0, offset + needle.count <= bytes.count else { return false }
        return Array(bytes[offset..<(offset + needle.count)]) == needle
    }

    private static func digits(_ bytes: [UInt8], _ cursor: inout Int, _ count: Int, _ element: String) throws -> String
    {
        guard cursor + count <= bytes.count else {
            throw OCRIngestError.aamva(
                offset: cursor, element: element,
                message: "needs \(count) digits but the payload ends at byte \(bytes.count) (truncated)")
        }
        let slice = bytes[cursor..<(cursor + count)]
        guard slice.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
            throw OCRIngestError.aamva(
                offset: cursor, element: element,
                message: "expected \(count) digits, found \(describeRange(bytes, cursor, count))")
        }
        cursor += count
        return String(decoding: slice, as: UTF8.self)
    }

    private static func number(_ bytes: [UInt8], _ cursor: inout Int, _ count: Int, _ element: String) throws -> Int {
        Int(try digits(bytes, &cursor, count, element)) ?? 0
    }

    private static func describe(_ byte: UInt8) -> String {
        byte >= 32 && byte < 127
            ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16, uppercase: true))"
    }

    /// Up to `count` bytes at `offset`, quoted with control bytes escaped. Any offset is safe: one before the
    /// payload (a directory offset shifted by stripped separators) or past its end is described, never sliced.
    static func describeRange(_ bytes: [UInt8], _ offset: Int, _ count: Int) -> String {
        guard offset >= 0 else { return "nothing (byte \(offset) is before the start of the payload)" }
        guard offset < bytes.count, count > 0 else { return "the end of the payload" }
        let slice = bytes[offset..<min(bytes.count, offset + count)]
        return "'"
            + slice.map { $0 >= 32 && $0 < 127 ? String(Character(Unicode.Scalar($0))) : "\\x\(String($0, radix: 16))" }
            .joined() + "'"
    }
}
