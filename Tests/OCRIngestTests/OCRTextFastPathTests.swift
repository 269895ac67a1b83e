import Foundation
import SanadCore
import Testing

@testable import OCRIngestPlugin

/// The byte-level cleaner (issue 43: 50 MB in seconds) must give what the character-by-character cleaner gave, for
/// every input: the same text and the same source range for every cleaned character.
@Suite("Plain OCR text: the byte path equals the character path")
struct OCRTextFastPathTests {
    /// Pieces that exercise every branch and every place a character may span bytes: combining marks after ASCII
    /// letters and spaces, an Arabic number sign (a prefix that takes the digit after it), CR LF, lone CR, CR CR LF,
    /// VT, FF, NEL, LS, PS, C0 controls, DEL, soft hyphens, format characters, ligatures, full-width and
    /// presentation forms, compatibility characters that normalise to a space plus a mark, flags, emoji sequences,
    /// Hangul jamo that NFKC would compose across characters, and hyphenated line breaks.
    static let pieces = [
        "a", "Z", "q", "7", ".", "-", " ", "  ", "\t", "\n", "\n\n", "\r", "\r\n", "\r\r\n", "\u{0B}", "\u{0C}",
        "\u{0}", "\u{07}", "\u{1C}", "\u{7F}", "\u{85}", "\u{2028}", "\u{2029}", "\u{00AD}", "\u{200B}", "\u{200D}",
        "\u{200F}", "\u{FEFF}", "e\u{0301}", "x\u{0308}\u{0323}", " \u{0301}", "\u{0301}", "(\u{0301})", "é",
        "\u{0600}1", "\u{0600} ", "\u{0600}", "فاتورة", " الكهرباء", "\u{064B}", "١٢٣", "\u{FE8D}", "\u{FB01}",
        "\u{FF21}", "\u{00A0}", "\u{2003}", "\u{00A8}", "\u{2010}", "\u{2011}", "\u{3131}\u{314F}", "🇺🇸🇬",
        "👨\u{200D}👩", "\u{1F44D}\u{1F3FD}", "re-\nview", "re-\r\nview", "RE-\nVIEW", "Hello world. ",
        String(repeating: "word ", count: 9), "recom-\n tration", "\u{2010}\nx", "ß", "؟ ", "。", "؛ ", "! ",
    ]

    static func randomText(_ rng: inout SeededGenerator) -> String {
        (0..<Int.random(in: 0...60, using: &rng)).map { _ in pieces.randomElement(using: &rng) ?? "" }.joined()
    }

    @Test("5,000 generated texts of ASCII, Arabic, combining marks, CR LF and controls clean exactly as before")
    func sameAsCharacterPath() {
        var rng = SeededGenerator(seed: 43)
        for _ in 0..<5000 {
            let text = Self.randomText(&rng)
            let fast = OCRText.clean(text)
            let reference = LegacyOCRClean.clean(text)
            #expect(fast.text == reference.text, "\(text.debugDescription)")
            #expect(fast.sources == reference.sources, "\(text.debugDescription)")
        }
    }

    @Test(
        "Known outputs: each cleaned character and its source bytes",
        arguments: [
            // CR LF is one break; a lone CR, VT and FF break too (FF twice: a blank line).
            ("ab\r\ncd\rxy", "ab\ncd\nxy", [0..<1, 1..<2, 4..<4, 4..<5, 5..<6, 7..<7, 7..<8, 8..<9]),
            ("ab\u{0C}cd", "ab\n\ncd", [0..<1, 1..<2, 3..<3, 3..<3, 3..<4, 4..<5]),
            // A combining mark after an ASCII letter is one character: precomposed, spanning both.
            ("Cafe\u{0301} x", "Café x", [0..<1, 1..<2, 2..<3, 3..<6, 6..<7, 7..<8]),
            // An Arabic number sign takes the digit after it; a control and a soft hyphen vanish.
            ("\u{0600}1\u{7}2\u{00AD}3", "\u{0600}123", [0..<3, 4..<5, 7..<8]),
            // A ligature becomes two characters from the same bytes; a no-break space is one space.
            ("\u{FB01}x\u{00A0}y", "fix y", [0..<3, 0..<3, 3..<4, 4..<6, 6..<7]),
            // A word hyphenated across CR LF is joined; its hyphen goes.
            (
                "regis-\r\ntration", "registration",
                [0..<1, 1..<2, 2..<3, 3..<4, 4..<5, 8..<9, 9..<10, 10..<11, 11..<12, 12..<13, 13..<14, 14..<15]
            ),
        ])
    func knownOutputs(raw: String, text: String, sources: [Range<Int>]) {
        let c = OCRText.clean(raw)
        #expect(c.text == text)
        #expect(c.sources == sources)
        #expect(LegacyOCRClean.clean(raw).sources == sources)
    }

    @Test("Sections cut anywhere in generated text clean as their own strings did")
    func sectionsCleanAlone() {
        var rng = SeededGenerator(seed: 9303)
        for _ in 0..<300 {
            let bytes = Array(Self.randomText(&rng).utf8)
            var cut = Int.random(in: 0...bytes.count, using: &rng)
            while cut < bytes.count, bytes[cut] & 0xC0 == 0x80 { cut += 1 }
            let part = String(decoding: bytes[..<cut], as: UTF8.self)
            let fast = bytes.withUnsafeBufferPointer { OCRText.clean(utf8: UnsafeBufferPointer(rebasing: $0[..<cut])) }
            #expect(fast.text == LegacyOCRClean.clean(part).text && fast.sources == LegacyOCRClean.clean(part).sources)
        }
    }

    @Test("ASCII text is chunked byte by byte exactly as character by character", arguments: [16, 40, 200, 800])
    func asciiChunks(size: Int) throws {
        var rng = SeededGenerator(seed: UInt64(size))
        let words = ["The", "amount", "due.", "Is", "it?", "Yes!", "45.00", "SAR", "\n", "\n\n", "account", "x"]
        for _ in 0..<50 {
            let text = (0..<Int.random(in: 0...400, using: &rng)).map { _ in
                words.randomElement(using: &rng) ?? ""
            }.joined(separator: " ")
            let c = OCRText.clean(text)
            let fast = try OCRText.chunk(c, documentID: "d", maxCharacters: size, overlap: size / 4)
            #expect(fast == OCRText.chunkByCharacters(c, documentID: "d", maxCharacters: size, overlap: size / 4))
            #expect(fast == LegacyOCRChunk.chunk(c, documentID: "d", maxCharacters: size, overlap: size / 4))
        }
    }

    @Test("Any text is chunked as before", arguments: [16, 40, 200])
    func mixedChunks(size: Int) throws {
        var rng = SeededGenerator(seed: 800 + UInt64(size))
        for _ in 0..<300 {
            let text = (0..<8).map { _ in Self.randomText(&rng) }.joined()
            let c = OCRText.clean(text)
            let chunks = try OCRText.chunk(c, documentID: "d", maxCharacters: size, overlap: size / 4)
            #expect(chunks == LegacyOCRChunk.chunk(c, documentID: "d", maxCharacters: size, overlap: size / 4))
        }
    }

    @Test("Every ASCII byte of a line is classified for the zone search as its character is")
    func asciiLineUnits() {
        for byte in UInt8(0)..<0x80 where !(0x0A...0x0D).contains(byte) {
            #expect(
                MRZReader.LineUnit(ascii: byte) == MRZReader.LineUnit(Character(Unicode.Scalar(byte))),
                "byte \(byte)")
        }
    }

    @Test("The zone search reads ASCII lines as bytes with the same blocks as character by character")
    func zoneSearchLines() {
        let zone = Specimen.td3.joined(separator: "\r\n")
        let texts = [
            "PASSPORT\n" + zone + "\nsome words\n", "P<\u{0085}" + zone, "ß\n" + zone, "a\u{2028}" + zone + "\u{0C}x",
            zone.lowercased() + "\n\n . , \n" + zone, "Strasse ß ﬀ ı \u{FF1C}\n" + zone,
        ]
        for text in texts {
            let reference = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
                .filter { !MRZReader.isNoise($0) }.map(MRZReader.classify)
            let lines = Array(text.utf8).split(omittingEmptySubsequences: false) { (0x0A...0x0D).contains($0) }
                .flatMap { String(decoding: $0, as: UTF8.self).split(whereSeparator: \.isNewline) }
                .filter { !MRZReader.isNoise($0) }.map(MRZReader.classify)
            #expect(reference == lines, "\(text.debugDescription)")
            #expect(!MRZReader.candidateBlocks(text).isEmpty)
        }
    }
}

/// The cleaner as it was before the byte path (commit 4d77244), kept as the reference the byte path must equal.
enum LegacyOCRClean {
    static func clean(_ raw: String) -> CleanedOCRText {
        var joiner = LineJoiner()
        var line: [(Character, Range<Int>)] = []
        var offset = 0
        for ch in raw {
            let span = offset..<(offset + ch.utf8.count)
            offset = span.upperBound
            if let ascii = ch.asciiValue {
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

    private static func appendSpace(_ line: inout [(Character, Range<Int>)], _ span: Range<Int>) {
        if let last = line.last, last.0 != " " { line.append((" ", span)) }
    }

    private struct LineJoiner {
        var result: [(Character, Range<Int>)] = []
        var blankBefore = false
        var previousLength = 0

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
                } else if result.count >= 2, ["-", "\u{2010}"].contains(result[result.count - 1].0),
                    result[result.count - 2].0.isLetter, first.0.isLowercase
                {
                    result.removeLast()
                } else if previousLength < OCRText.shortLine {
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
}

/// The chunker as it was before the byte path (commit 4d77244), over `Character`s, kept as the reference.
enum LegacyOCRChunk {
    static func chunk(
        _ cleaned: CleanedOCRText, documentID: String, maxCharacters: Int, overlap: Int
    ) -> [OCRTextChunk] {
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
            var next = max(start + 1, end - overlap)
            while next > start + 1, next < end, !chars[next - 1].isWhitespace { next -= 1 }
            if next <= start + 1 { next = max(start + 1, end - overlap) }
            start = next
        }
        return chunks
    }

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
