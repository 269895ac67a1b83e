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
    public static func clean(_ raw: String) -> CleanedOCRText {
        var joiner = LineJoiner()
        joiner.result.reserveCapacity(raw.utf8.count)
        var line: [(Character, Range<Int>)] = []
        var offset = 0
        for ch in raw {
            let span = offset..<(offset + ch.utf8.count)
            offset = span.upperBound
            if let ascii = ch.asciiValue {
                // ASCII needs no normalisation: the common case, kept off Foundation's slow path.
                switch ascii {
                case 0x0A, 0x0D, 0x0B: joiner.add(&line)
                case 0x0C:
                    joiner.add(&line)
                    joiner.add(&line)
                case 0x09, 0x20: appendSpace(&line, span)
                case 0x21...0x7E: line.append((ch, span))
                default: continue
                }
                continue
            }
            if ch.isNewline {
                joiner.add(&line)
                continue
            }
            if ch == "\u{00AD}" { continue }
            if ch.isWhitespace {
                appendSpace(&line, span)
                continue
            }
            if ch.unicodeScalars.allSatisfy({
                $0.properties.generalCategory == .control || $0.properties.generalCategory == .format
            }) {
                continue
            }
            for normalised in String(ch).precomposedStringWithCompatibilityMapping {
                if normalised.isWhitespace { appendSpace(&line, span) } else { line.append((normalised, span)) }
            }
        }
        joiner.add(&line)
        return CleanedOCRText(text: String(joiner.result.map(\.0)), sources: joiner.result.map(\.1))
    }

    /// One space, never at a line's start nor after another space.
    private static func appendSpace(_ line: inout [(Character, Range<Int>)], _ span: Range<Int>) {
        if let last = line.last, last.0 != " " { line.append((" ", span)) }
    }

    /// Joins trimmed lines into paragraphs as they come, so cleaning keeps one line, not the whole text, apart.
    private struct LineJoiner {
        var result: [(Character, Range<Int>)] = []
        var blankBefore = false
        var previousLength = 0

        /// Adds `line` (spaces already collapsed, no leading space) and empties it for the next line.
        mutating func add(_ line: inout [(Character, Range<Int>)]) {
            defer { line.removeAll(keepingCapacity: true) }
            if line.last?.0 == " " { line.removeLast() }
            guard let first = line.first else {
                blankBefore = !result.isEmpty
                return
            }
            if !result.isEmpty {
                let joinSpan = first.1.lowerBound..<first.1.lowerBound
                if blankBefore {
                    result += [("\n", joinSpan), ("\n", joinSpan)]
                } else if result.count >= 2, isHyphen(result[result.count - 1].0), result[result.count - 2].0.isLetter,
                    first.0.isLowercase
                {
                    result.removeLast()
                } else if previousLength < shortLine {
                    result.append(("\n", joinSpan))
                } else {
                    result.append((" ", joinSpan))
                }
            }
            result += line
            previousLength = line.count
            blankBefore = false
        }
    }

    private static func isHyphen(_ c: Character) -> Bool { c == "-" || c == "\u{2010}" }

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
        let bytes = Array(raw.utf8)
        var chunks: [OCRTextChunk] = []
        var start = 0
        var cleanedOffset = 0
        while start < bytes.count {
            let end = sectionEnd(bytes, from: start)
            let cleaned = clean(String(decoding: bytes[start..<end], as: UTF8.self))
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

    /// Where the section starting at `start` ends: after a blank line, else a line break, else a space in the
    /// second half of `sectionBytes`; else at a UTF-8 character boundary; the end of `bytes` when it is near.
    static func sectionEnd(_ bytes: [UInt8], from start: Int) -> Int {
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
        let chars = Array(cleaned.text)
        var chunks: [OCRTextChunk] = []
        var start = 0
        while start < chars.count {
            while start < chars.count, chars[start].isWhitespace { start += 1 }
            if start >= chars.count { break }
            var end = min(chars.count, start + maxCharacters)
            if end < chars.count { end = boundary(chars, from: start, to: end) }
            var last = end
            while last > start, chars[last - 1].isWhitespace { last -= 1 }
            let range = start..<last
            let source = cleaned.sources[range.lowerBound].lowerBound..<cleaned.sources[range.upperBound - 1].upperBound
            chunks.append(
                OCRTextChunk(
                    documentID: documentID, index: chunks.count, text: String(chars[range]), cleanedRange: range,
                    sourceRange: source))
            if end >= chars.count { break }
            // Step back by the overlap to a word start, always moving forward.
            var next = max(start + 1, end - overlap)
            while next > start + 1, next < end, !chars[next - 1].isWhitespace { next -= 1 }
            if next <= start + 1 { next = max(start + 1, end - overlap) }
            start = next
        }
        return chunks
    }

    /// The best place to end a chunk in `start..<limit`: after a paragraph break, a sentence end, or a space,
    /// searching only the second half of the window so chunks stay large.
    private static func boundary(_ chars: [Character], from start: Int, to limit: Int) -> Int {
        let floor = start + (limit - start) / 2
        let sentenceEnds: Set<Character> = [".", "!", "?", "؟", "。", "؛"]
        for i in stride(from: limit - 1, to: floor, by: -1) where chars[i] == "\n" && chars[i - 1] == "\n" {
            return i + 1
        }
        for i in stride(from: limit - 1, to: floor, by: -1)
        where chars[i].isWhitespace && sentenceEnds.contains(chars[i - 1]) {
            return i + 1
        }
        for i in stride(from: limit - 1, to: floor, by: -1) where chars[i].isWhitespace { return i + 1 }
        return limit
    }
}
