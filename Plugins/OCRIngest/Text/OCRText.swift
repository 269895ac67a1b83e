import Foundation

/// OCR text after cleaning, with where each character came from in the original.
public struct CleanedOCRText: Sendable {
    /// The cleaned text.
    public let text: String
    /// For each character of `text`, the UTF-8 byte range in the original it came from.
    public let sources: [Range<Int>]
}

/// A piece of a document for retrieval: its text, where it lies in the cleaned text (characters) and in the
/// original document (UTF-8 bytes, for citations).
public struct OCRTextChunk: Sendable, Hashable {
    public let documentID: String
    /// 0-based position among the document's chunks.
    public let index: Int
    public let text: String
    /// Character range in the cleaned text.
    public let cleanedRange: Range<Int>
    /// UTF-8 byte range in the original text.
    public let sourceRange: Range<Int>
}

/// Cleaning and chunking of plain OCR text (a bill, a letter, any scanned page).
public enum OCRText {
    /// Lines shorter than this keep their line break (forms, tables, addresses); longer ones are wrapped prose.
    static let shortLine = 40

    /// Cleans OCR text: compatibility-normalises each character (ligatures, full-width forms, Arabic presentation
    /// forms), turns every kind of space into one space, drops control characters and soft hyphens, trims lines,
    /// joins a word hyphenated across a line break (`regis-\ntration` → `registration`), joins wrapped prose lines,
    /// keeps the breaks of short lines, and keeps one blank line between paragraphs.
    ///
    /// Linear in the text: ASCII bytes are read as bytes; only the runs around non-ASCII bytes (from the last place
    /// where a character must end, to the next) are read as characters, so every character is the one the whole
    /// string holds.
    public static func clean(_ raw: String) -> CleanedOCRText {
        var raw = raw
        return raw.withUTF8 { clean(utf8: $0) }
    }

    /// Cleans valid UTF-8 (what `clean(_:)` does), with source ranges counted from the buffer's start.
    static func clean(utf8 bytes: UnsafeBufferPointer<UInt8>) -> CleanedOCRText {
        var out = CleanedTextBuilder(capacity: bytes.count)
        var reader = CharacterReader()
        let count = bytes.count
        var i = 0
        while i < count {
            let byte = bytes[i]
            if byte == carriageReturn, i + 1 < count, bytes[i + 1] == lineFeed {
                // CR LF is one character, one line break.
                out.endLine()
                i += 2
                continue
            }
            // An ASCII byte is a whole character when what follows is ASCII or it is a control (a character always
            // ends after a control; a printable one may take a combining mark).
            if byte < 0x80, i + 1 == count || bytes[i + 1] < 0x80 || isASCIIControl(byte) {
                out.add(ascii: byte, at: i)
                i += 1
                continue
            }
            let end = characterRunEnd(bytes, from: i)
            var offset = i
            for ch in String(decoding: UnsafeBufferPointer(rebasing: bytes[i..<end]), as: UTF8.self) {
                let span = offset..<(offset + ch.utf8.count)
                offset = span.upperBound
                if let ascii = ch.asciiValue {
                    // ASCII needs no normalisation; CR LF (ASCII value 0x0A) is one line break.
                    out.add(ascii: ascii, at: span.lowerBound)
                } else {
                    out.add(reader.reading(ch), span)
                }
            }
            i = end
        }
        return out.finish()
    }

    private static let lineFeed: UInt8 = 0x0A
    private static let carriageReturn: UInt8 = 0x0D

    /// C0 controls and DEL: Unicode ends a character before and after each (CR LF aside).
    private static func isASCIIControl(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x7F }

    /// Where the run of characters starting at `start` (a character boundary) first reaches a place where a
    /// character must end whatever the text around it: between two ASCII bytes (CR LF aside), or before an ASCII
    /// control. Inside the run, a printable ASCII byte may start a character that takes the non-ASCII marks after
    /// it, or end one a non-ASCII prefix (Arabic number signs) began.
    private static func characterRunEnd(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var j = start + 1
        while j < bytes.count {
            let (before, byte) = (bytes[j - 1], bytes[j])
            if byte < 0x80, before < 0x80 || isASCIIControl(byte), !(before == carriageReturn && byte == lineFeed) {
                return j
            }
            j += 1
        }
        return j
    }

    /// The cleaned text as it grows, line by line: UTF-8, where each cleaned character came from, and where each
    /// starts. A line is written in place; the break (or space) before it is chosen when its first character comes.
    private struct CleanedTextBuilder {
        var bytes: [UInt8] = []
        var sources: [Range<Int>] = []
        /// Where each cleaned character starts in `bytes`.
        var starts: [Int] = []
        /// Characters of the line being read.
        var lineLength = 0
        var blankBefore = false
        var previousLength = 0

        init(capacity: Int) {
            bytes.reserveCapacity(capacity)
            sources.reserveCapacity(capacity)
            starts.reserveCapacity(capacity)
        }

        /// One ASCII character at byte `offset` of the original.
        mutating func add(ascii: UInt8, at offset: Int) {
            switch ascii {
            case 0x0A, 0x0D, 0x0B: endLine()
            case 0x0C:
                endLine()
                endLine()
            case 0x09, 0x20: addSpace(offset..<(offset + 1))
            case 0x21...0x7E:
                if lineLength == 0 { startLine(first: Character(Unicode.Scalar(ascii)), at: offset) }
                push(ascii, offset..<(offset + 1))
                lineLength += 1
            default: break
            }
        }

        /// A non-ASCII character, from `span` of the original, as `CharacterReader` read it.
        mutating func add(_ reading: CharacterReader.Reading, _ span: Range<Int>) {
            switch reading {
            case .lineBreak: endLine()
            case .space: addSpace(span)
            case .nothing: break
            case .characters(let characters):
                for (normalised, isSpace) in characters {
                    if isSpace {
                        addSpace(span)
                        continue
                    }
                    if lineLength == 0 { startLine(first: normalised, at: span.lowerBound) }
                    push(normalised, span)
                    lineLength += 1
                }
            }
        }

        /// One space, never at a line's start nor after another space.
        mutating func addSpace(_ span: Range<Int>) {
            guard lineLength > 0, !lastIsSpace else { return }
            push(0x20, span)
            lineLength += 1
        }

        /// Ends the line: drops its trailing space; an empty line marks a paragraph break.
        mutating func endLine() {
            if lineLength > 0, lastIsSpace {
                pop()
                lineLength -= 1
            }
            guard lineLength > 0 else {
                blankBefore = !starts.isEmpty
                return
            }
            previousLength = lineLength
            lineLength = 0
            blankBefore = false
        }

        /// Before a line's first character: one blank line after a paragraph, nothing where a hyphenated word
        /// goes on (the hyphen dropped), a line break after a short line, else a space (wrapped prose).
        private mutating func startLine(first: Character, at offset: Int) {
            guard !starts.isEmpty else { return }
            let joinSpan = offset..<offset
            if blankBefore {
                push(lineFeed, joinSpan)
                push(lineFeed, joinSpan)
            } else if starts.count >= 2, isHyphen(character(starts.count - 1)),
                character(starts.count - 2)?.isLetter == true, first.isLowercase
            {
                pop()
            } else if previousLength < shortLine {
                push(lineFeed, joinSpan)
            } else {
                push(0x20, joinSpan)
            }
        }

        private var lastIsSpace: Bool { starts.last == bytes.count - 1 && bytes.last == 0x20 }

        /// The cleaned character at `index` (one character's UTF-8, so one character).
        private func character(_ index: Int) -> Character? {
            let end = index + 1 < starts.count ? starts[index + 1] : bytes.count
            return String(decoding: bytes[starts[index]..<end], as: UTF8.self).first
        }

        private mutating func push(_ byte: UInt8, _ span: Range<Int>) {
            starts.append(bytes.count)
            bytes.append(byte)
            sources.append(span)
        }

        private mutating func push(_ ch: Character, _ span: Range<Int>) {
            starts.append(bytes.count)
            bytes.append(contentsOf: ch.utf8)
            sources.append(span)
        }

        private mutating func pop() {
            bytes.removeSubrange(starts.removeLast()...)
            sources.removeLast()
        }

        mutating func finish() -> CleanedOCRText {
            endLine()
            return CleanedOCRText(text: String(decoding: bytes, as: UTF8.self), sources: sources)
        }
    }

    /// What a non-ASCII character becomes: a line break, a space, nothing (controls, format characters, soft
    /// hyphens), or its compatibility normalisation (Foundation's, costly). Remembered for the characters a text
    /// repeats (Arabic letters and marks), at most `capacity` of each kind.
    struct CharacterReader {
        enum Reading {
            case lineBreak, space, nothing
            /// The normalised characters, each with whether it is white space.
            case characters([(Character, isSpace: Bool)])
        }

        static let capacity = 4096
        /// One-scalar characters by their scalar: a cheap key.
        private var byScalar: [UInt32: Reading] = [:]
        private var byCharacter: [Character: Reading] = [:]

        mutating func reading(_ ch: Character) -> Reading {
            let scalars = ch.unicodeScalars
            if let scalar = scalars.first, scalars.index(after: scalars.startIndex) == scalars.endIndex {
                if let known = byScalar[scalar.value] { return known }
                let made = Self.read(ch)
                if byScalar.count < Self.capacity { byScalar[scalar.value] = made }
                return made
            }
            if let known = byCharacter[ch] { return known }
            let made = Self.read(ch)
            if byCharacter.count < Self.capacity { byCharacter[ch] = made }
            return made
        }

        private static func read(_ ch: Character) -> Reading {
            if ch.isNewline { return .lineBreak }
            if ch == "\u{00AD}" { return .nothing }
            if ch.isWhitespace { return .space }
            if ch.unicodeScalars.allSatisfy({
                $0.properties.generalCategory == .control || $0.properties.generalCategory == .format
            }) {
                return .nothing
            }
            return .characters(String(ch).precomposedStringWithCompatibilityMapping.map { ($0, $0.isWhitespace) })
        }
    }

    private static func isHyphen(_ c: Character?) -> Bool { c == "-" || c == "\u{2010}" }

    /// Raw bytes cleaned and chunked at a time by `chunks(of:)`: memory stays bounded by this, not the document.
    static let sectionBytes = 1 << 20

    /// Cleans and chunks `raw` one section of about `sectionBytes` at a time, each ending at a paragraph break
    /// (else a line break, else a space) in its second half; no chunk crosses a section. Time is linear in the
    /// input and memory is bounded by a section plus the chunks. `cleanedRange` counts in the sections' cleaned
    /// texts joined by a paragraph break; `sourceRange` is exact. `progress` gets (bytes done, bytes in all) after
    /// each section.
    public static func chunks(
        of raw: String, documentID: String, maxCharacters: Int = 800, overlap: Int = 120,
        progress: ((_ done: Int, _ total: Int) -> Void)? = nil
    ) throws -> [OCRTextChunk] {
        var raw = raw
        return try raw.withUTF8 { bytes in
            var chunks: [OCRTextChunk] = []
            var start = 0
            var cleanedOffset = 0
            while start < bytes.count {
                let end = sectionEnd(bytes, from: start)
                let cleaned = clean(utf8: UnsafeBufferPointer(rebasing: bytes[start..<end]))
                let part = try chunk(cleaned, documentID: documentID, maxCharacters: maxCharacters, overlap: overlap)
                for c in part {
                    chunks.append(
                        OCRTextChunk(
                            documentID: documentID, index: chunks.count, text: c.text,
                            cleanedRange: (c.cleanedRange.lowerBound + cleanedOffset)..<(c.cleanedRange.upperBound
                                + cleanedOffset),
                            sourceRange: (c.sourceRange.lowerBound + start)..<(c.sourceRange.upperBound + start)))
                }
                let length = cleaned.sources.count
                if length > 0 { cleanedOffset += length + 2 }
                start = end
                progress?(end, bytes.count)
            }
            if bytes.isEmpty {
                _ = try chunk(clean(""), documentID: documentID, maxCharacters: maxCharacters, overlap: overlap)
            }
            return chunks
        }
    }

    /// Where the section starting at `start` ends (see the buffer form).
    static func sectionEnd(_ bytes: [UInt8], from start: Int) -> Int {
        bytes.withUnsafeBufferPointer { sectionEnd($0, from: start) }
    }

    /// Where the section starting at `start` ends: after a blank line, else a line break, else a space in the
    /// second half of `sectionBytes`; else at a UTF-8 character boundary; the end of `bytes` when it is near.
    static func sectionEnd(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        let limit = start + sectionBytes
        guard limit < bytes.count else { return bytes.count }
        let floor = start + sectionBytes / 2
        let newline = UInt8(ascii: "\n")
        for i in stride(from: limit, to: floor, by: -1) where bytes[i - 1] == newline {
            var j = i - 2
            while j > floor, bytes[j] == UInt8(ascii: "\r") || bytes[j] == UInt8(ascii: " ") { j -= 1 }
            if bytes[j] == newline { return i }
        }
        if let i = bytes[floor..<limit].lastIndex(of: newline) { return i + 1 }
        if let i = bytes[floor..<limit].lastIndex(of: UInt8(ascii: " ")) { return i + 1 }
        var i = limit
        while i > start + 1, bytes[i] & 0xC0 == 0x80 { i -= 1 }
        return i
    }

    /// Splits cleaned text into chunks of at most `maxCharacters`, each starting `overlap` characters (rounded to a
    /// word start) before the previous one ended. Chunks end at a paragraph break, else a sentence end, else a
    /// space, else at the limit.
    public static func chunk(
        _ cleaned: CleanedOCRText, documentID: String, maxCharacters: Int = 800, overlap: Int = 120
    ) throws -> [OCRTextChunk] {
        guard maxCharacters >= 16 else {
            throw OCRIngestError.invalidChunking("maxCharacters is \(maxCharacters); use 16 or more")
        }
        guard overlap >= 0, overlap * 2 <= maxCharacters else {
            throw OCRIngestError.invalidChunking(
                "overlap is \(overlap) for chunks of \(maxCharacters); use 0 to \(maxCharacters / 2)")
        }
        var text = cleaned.text
        return text.withUTF8 { utf8 in
            // ASCII (no CR: cleaning leaves none) is one character a byte: chunked without making characters.
            if !utf8.contains(where: { $0 >= 0x80 || $0 == 0x0D }) {
                return chunk(
                    utf8, cleaned.sources, documentID: documentID, maxCharacters: maxCharacters, overlap: overlap
                ) {
                    String(decoding: UnsafeBufferPointer(rebasing: utf8[$0]), as: UTF8.self)
                }
            }
            return chunkByCharacters(cleaned, documentID: documentID, maxCharacters: maxCharacters, overlap: overlap)
        }
    }

    /// Chunks `cleaned` character by character, as any text with non-ASCII characters is (options already checked).
    static func chunkByCharacters(
        _ cleaned: CleanedOCRText, documentID: String, maxCharacters: Int, overlap: Int
    ) -> [OCRTextChunk] {
        // Each character's kind, made once (the boundary search looks at characters again and again), and where it
        // starts in the UTF-8, so a chunk's text is a slice of it.
        var units: [CharacterUnit] = []
        var starts: [Int] = []
        var known: [UInt32: CharacterUnit] = [:]
        var offset = 0
        for ch in cleaned.text {
            let scalars = ch.unicodeScalars
            if let scalar = scalars.first, scalars.index(after: scalars.startIndex) == scalars.endIndex {
                let unit = known[scalar.value] ?? CharacterUnit(ch)
                if known.count < 4096 { known[scalar.value] = unit }
                units.append(unit)
            } else {
                units.append(CharacterUnit(ch))
            }
            starts.append(offset)
            offset += ch.utf8.count
        }
        starts.append(offset)
        var text = cleaned.text
        return text.withUTF8 { utf8 in
            chunk(units, cleaned.sources, documentID: documentID, maxCharacters: maxCharacters, overlap: overlap) {
                String(
                    decoding: UnsafeBufferPointer(rebasing: utf8[starts[$0.lowerBound]..<starts[$0.upperBound]]),
                    as: UTF8.self)
            }
        }
    }

    /// `chunk(_:documentID:maxCharacters:overlap:)` over the cleaned text's characters (their kinds, or the bytes
    /// of ASCII text), `text` making a chunk's text from its range.
    private static func chunk<Units: RandomAccessCollection>(
        _ chars: Units, _ sources: [Range<Int>], documentID: String, maxCharacters: Int, overlap: Int,
        text: (Range<Int>) -> String
    ) -> [OCRTextChunk] where Units.Element: ChunkUnit, Units.Index == Int {
        var chunks: [OCRTextChunk] = []
        var start = 0
        while start < chars.count {
            while start < chars.count, chars[start].isSpace { start += 1 }
            if start >= chars.count { break }
            var end = min(chars.count, start + maxCharacters)
            if end < chars.count { end = boundary(chars, from: start, to: end) }
            var last = end
            while last > start, chars[last - 1].isSpace { last -= 1 }
            let range = start..<last
            let source = sources[range.lowerBound].lowerBound..<sources[range.upperBound - 1].upperBound
            chunks.append(
                OCRTextChunk(
                    documentID: documentID, index: chunks.count, text: text(range), cleanedRange: range,
                    sourceRange: source))
            if end >= chars.count { break }
            // Step back by the overlap to a word start, always moving forward.
            var next = max(start + 1, end - overlap)
            while next > start + 1, next < end, !chars[next - 1].isSpace { next -= 1 }
            if next <= start + 1 { next = max(start + 1, end - overlap) }
            start = next
        }
        return chunks
    }

    /// The best place to end a chunk in `start..<limit`: after a paragraph break, a sentence end, or a space,
    /// searching only the second half of the window so chunks stay large.
    private static func boundary<Units: RandomAccessCollection>(_ chars: Units, from start: Int, to limit: Int) -> Int
    where Units.Element: ChunkUnit, Units.Index == Int {
        let floor = start + (limit - start) / 2
        for i in stride(from: limit - 1, to: floor, by: -1) where chars[i].isLineFeed && chars[i - 1].isLineFeed {
            return i + 1
        }
        for i in stride(from: limit - 1, to: floor, by: -1) where chars[i].isSpace && chars[i - 1].endsSentence {
            return i + 1
        }
        for i in stride(from: limit - 1, to: floor, by: -1) where chars[i].isSpace { return i + 1 }
        return limit
    }
}

/// What chunking asks of a cleaned character.
private protocol ChunkUnit {
    var isSpace: Bool { get }
    var isLineFeed: Bool { get }
    var endsSentence: Bool { get }
}

/// What chunking asks of a cleaned `Character`.
private struct CharacterUnit: ChunkUnit {
    static let sentenceEnds: Set<Character> = [".", "!", "?", "؟", "。", "؛"]
    let isSpace: Bool
    let isLineFeed: Bool
    let endsSentence: Bool

    init(_ ch: Character) {
        isSpace = ch.isWhitespace
        isLineFeed = ch == "\n"
        endsSentence = Self.sentenceEnds.contains(ch)
    }
}

/// An ASCII character of cleaned text.
extension UInt8: ChunkUnit {
    fileprivate var isSpace: Bool { self == 0x20 || (0x09...0x0D).contains(self) }
    fileprivate var isLineFeed: Bool { self == 0x0A }
    fileprivate var endsSentence: Bool {
        self == UInt8(ascii: ".") || self == UInt8(ascii: "!") || self == UInt8(ascii: "?")
    }
}
