import Foundation
import SanadNative

/// One TrueType font a PDF embeds: shapes text through HarfBuzz, remembers every glyph a document shows and the
/// text each stands for, and writes itself as a Type0 font (Identity-H) over a CIDFontType2 whose `FontFile2` is a
/// subset of the file with the glyph ids kept, its `/W` widths, and a `ToUnicode` CMap so text extraction gives
/// the characters back.
final class EmbeddedFont {
    let font: HarfBuzzFont
    let subsetter: HarfBuzzSubsetter
    /// The file, for errors and the PDF's font name.
    let file: String
    let metrics: FontMetrics
    /// The text each glyph shows, from the first time it was used (a lam-alef ligature shows two letters).
    private(set) var text: [UInt32: [UInt32]] = [:]
    private var unicodes: Set<UInt32> = []

    init(file: String, library: HarfBuzzLibrary, subsetter: HarfBuzzSubsetter) throws {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw NativeLibraryError("\(file): the font cannot be read")
        }
        let bytes = [UInt8](data)
        font = try HarfBuzzFont(library: library, bytes: bytes, name: file)
        metrics = try FontMetrics(bytes, file: file)
        self.subsetter = subsetter
        self.file = file
    }

    var unitsPerEm: Int { font.unitsPerEm }

    /// `scalars` shaped in one direction; each glyph's text recorded for the ToUnicode map.
    func shape(_ scalars: [UInt32], rightToLeft: Bool, language: String) -> [ShapedGlyph] {
        let glyphs = font.shape(scalars, rightToLeft: rightToLeft, language: language)
        record(glyphs, scalars: scalars, rightToLeft: rightToLeft)
        unicodes.formUnion(scalars)
        return glyphs
    }

    /// Gives each new glyph the text of its cluster: one character each when a cluster has as many glyphs as
    /// characters (a letter and its mark), else all of it to the cluster's first glyph (a ligature). A ligature
    /// in right-to-left text holds its characters in visual order, as readers that put the page's glyphs back in
    /// logical order (poppler, pdf.js) lay out a glyph's characters left to right before reversing the run.
    private func record(_ glyphs: [ShapedGlyph], scalars: [UInt32], rightToLeft: Bool) {
        let logical = rightToLeft ? Array(glyphs.reversed()) : glyphs
        let starts = Set(glyphs.map(\.cluster)).sorted()
        var members: [Int: [UInt32]] = [:]
        for g in logical { members[g.cluster, default: []].append(g.glyph) }
        for (n, start) in starts.enumerated() {
            let chars = Array(scalars[start..<(n + 1 < starts.count ? starts[n + 1] : scalars.count)])
            let ids = members[start, default: []]
            if ids.count == chars.count {
                for (g, c) in zip(ids, chars) where text[g] == nil { text[g] = [c] }
            } else if let first = ids.first, text[first] == nil {
                text[first] = rightToLeft ? chars.reversed() : chars
            }
        }
    }

    /// The glyph's width as the PDF's `/W` gives it, in thousandths of an em.
    func width(_ glyph: UInt32) -> Int { (font.advance(glyph) * 1000 + unitsPerEm / 2) / unitsPerEm }

    /// The PDF objects of this font, streams deflated when `deflate` is given: `add` appends one object and returns
    /// its number; the Type0 font's number is returned.
    func pdfObjects(add: (_ object: [UInt8]) -> Int, deflate: ZlibLibrary?) throws -> Int {
        let glyphs = Set(text.keys).union([0])
        let subset = try subsetter.subset(font, glyphs: glyphs, unicodes: unicodes, name: file)
        let name = "\(subsetTag(glyphs))+\(metrics.postScriptName)"
        let fontFile = add(pdfStream(subset, entries: " /Length1 \(subset.count)", deflate: deflate))
        let scale = { (units: Int) in units * 1000 / self.unitsPerEm }
        let descriptor = add(
            Array(
                ("<< /Type /FontDescriptor /FontName /\(name) /Flags 4 /FontBBox [\(metrics.box.map(scale).map(String.init).joined(separator: " "))] "
                    + "/ItalicAngle 0 /Ascent \(scale(metrics.ascent)) /Descent \(scale(metrics.descent)) "
                    + "/CapHeight \(scale(metrics.ascent)) /StemV 80 /FontFile2 \(fontFile) 0 R >>").utf8))
        let widths = glyphs.sorted().map { "\($0) [\(width($0))]" }.joined(separator: " ")
        let cid = add(
            Array(
                ("<< /Type /Font /Subtype /CIDFontType2 /BaseFont /\(name) "
                    + "/CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> "
                    + "/FontDescriptor \(descriptor) 0 R /DW 1000 /W [\(widths)] /CIDToGIDMap /Identity >>").utf8))
        let cmap = Array(toUnicodeCMap(text).utf8)
        let toUnicode = add(pdfStream(cmap, deflate: deflate))
        return add(
            Array(
                ("<< /Type /Font /Subtype /Type0 /BaseFont /\(name) /Encoding /Identity-H "
                    + "/DescendantFonts [\(cid) 0 R] /ToUnicode \(toUnicode) 0 R >>").utf8))
    }
}

/// Six capital letters naming a subset (PDF 32000 9.6.4), from the glyphs it holds.
func subsetTag(_ glyphs: Set<UInt32>) -> String {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a
    for g in glyphs.sorted() {
        hash = (hash ^ UInt64(g)) &* 0x100_0000_01b3
    }
    return String((0..<6).map { Character(Unicode.Scalar(UInt8(65 + (hash >> (UInt64($0) * 5)) % 26))) })
}

/// A ToUnicode CMap: each glyph id (two bytes, Identity-H) to its text in UTF-16BE, at most 100 to a block.
func toUnicodeCMap(_ text: [UInt32: [UInt32]]) -> String {
    func hex4(_ v: UInt32) -> String { zeroPadded(String(v, radix: 16, uppercase: true), 4) }
    var out = """
        /CIDInit /ProcSet findresource begin
        12 dict begin
        begincmap
        /CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def
        /CMapName /Adobe-Identity-UCS def
        /CMapType 2 def
        1 begincodespacerange
        <0000> <FFFF>
        endcodespacerange

        """
    let entries = text.keys.sorted().compactMap { g -> String? in
        let utf16 = text[g, default: []].compactMap(Unicode.Scalar.init).flatMap { String($0).utf16 }
        guard !utf16.isEmpty else { return nil }
        return "<\(hex4(g))> <\(utf16.map { hex4(UInt32($0)) }.joined())>"
    }
    for start in stride(from: 0, to: entries.count, by: 100) {
        let block = entries[start..<min(start + 100, entries.count)]
        out += "\(block.count) beginbfchar\n" + block.joined(separator: "\n") + "\nendbfchar\n"
    }
    out += "endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n"
    return out
}

/// What a PDF's font descriptor needs from a TrueType file: the bounding box (`head`), ascent and descent
/// (`hhea`), and the PostScript name (`name` ID 6), all in font units.
struct FontMetrics {
    var box: [Int]
    var ascent: Int
    var descent: Int
    var postScriptName: String

    init(_ bytes: [UInt8], file: String) throws {
        func u16(_ at: Int) -> Int { at + 1 < bytes.count ? Int(bytes[at]) << 8 | Int(bytes[at + 1]) : 0 }
        func i16(_ at: Int) -> Int { Int(Int16(bitPattern: UInt16(u16(at)))) }
        func u32(_ at: Int) -> Int { u16(at) << 16 | u16(at + 2) }
        var tables: [String: Int] = [:]
        for i in 0..<u16(4) {
            let record = 12 + 16 * i
            guard record + 16 <= bytes.count else { break }
            tables[String(decoding: bytes[record..<record + 4], as: UTF8.self)] = u32(record + 8)
        }
        guard let head = tables["head"], let hhea = tables["hhea"] else {
            throw NativeLibraryError("\(file): not a TrueType font (no head or hhea table)")
        }
        box = [i16(head + 36), i16(head + 38), i16(head + 40), i16(head + 42)]
        ascent = i16(hhea + 4)
        descent = i16(hhea + 6)
        postScriptName = "Font"
        if let name = tables["name"] {
            let strings = name + u16(name + 4)
            for r in 0..<u16(name + 2) {
                let record = name + 6 + 12 * r
                guard u16(record + 6) == 6, u16(record) == 3 || u16(record) == 1 else { continue }
                let start = strings + u16(record + 10)
                let raw = Array(bytes[min(start, bytes.count)..<min(start + u16(record + 8), bytes.count)])
                let text =
                    u16(record) == 3
                    ? String(
                        decoding: stride(from: 0, to: raw.count - 1, by: 2).map {
                            UInt16(raw[$0]) << 8 | UInt16(raw[$0 + 1])
                        }, as: UTF16.self)
                    : String(decoding: raw, as: UTF8.self)
                let clean = text.filter { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
                if !clean.isEmpty {
                    postScriptName = clean
                    break
                }
            }
        }
    }
}
