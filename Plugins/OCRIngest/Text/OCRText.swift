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
        // Pass 1: characters with their source spans, normalised; lines split.
        var lines: [[(Character, Range<Int>)]] = [[]]
        var offset = 0
        for ch in raw {
            let span = offset..<(offset + ch.utf8.count)
            offset = span.upperBound
            if ch.isNewline || ch == "\u{0C}" {
                lines.append([])
                if ch == "\u{0C}" { lines.append([]) }
                continue
            }
            if ch == "\u{00AD}" { continue }
            if ch.isWhitespace {
                lines[lines.count - 1].append((" ", span))
                continue
            }
            if ch.unicodeScalars.allSatisfy({
                $0.properties.generalCategory == .control || $0.properties.generalCategory == .format
            }) {
                continue
            }
            for normalised in String(ch).precomposedStringWithCompatibilityMapping {
                lines[lines.count - 1].append((normalised.isWhitespace ? " " : normalised, span))
            }
        }
        // Pass 2: trim and collapse spaces inside each line.
        let tidy: [[(Character, Range<Int>)]] = lines.map { line in
            var out: [(Character, Range<Int>)] = []
            for item in line {
                if item.0 == " " && (out.isEmpty || out.last?.0 == " ") { continue }
                out.append(item)
            }
            if out.last?.0 == " " { out.removeLast() }
            return out
        }
        // Pass 3: join lines into paragraphs.
        var result: [(Character, Range<Int>)] = []
        var blankBefore = false
        var previousLength = 0
        for line in tidy {
            guard let first = line.first else {
                blankBefore = !result.isEmpty
                continue
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
        return CleanedOCRText(text: String(result.map(\.0)), sources: result.map(\.1))
    }

    private static func isHyphen(_ c: Character) -> Bool { c == "-" || c == "\u{2010}" }

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
