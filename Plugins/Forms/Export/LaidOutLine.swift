import Foundation
import SanadNative

/// One line of text shaped for the page: its bidi runs in visual order, each shaped by HarfBuzz in its own
/// direction, so the glyphs run left to right as they are drawn.
struct LaidOutLine {
    var glyphs: [ShapedGlyph]
    var rightToLeft: Bool
    /// The width in points.
    var width: Double
    /// Glyphs the font has none for (glyph 0), other than for spaces.
    var missing: Int
    let unitsPerEm: Int
    /// Each glyph's `/W` width, in thousandths of an em.
    let pdfWidths: [Int]
    /// Glyphs drawn together for one cluster of several characters and glyphs (a letter and its marks), with the
    /// text a reader should take from them: marked as `ActualText`, as a mark drawn over its letter would
    /// otherwise read back as a separate word. Right-to-left text is given in visual order, as for a ligature
    /// (`EmbeddedFont.record`).
    var clusters: [(glyphs: Range<Int>, text: [UInt32])] = []

    init(_ scalars: [Unicode.Scalar], font: EmbeddedFont, size: Double, language: String) {
        let bidi = BidiLine(scalars)
        var glyphs: [ShapedGlyph] = []
        var missing = 0
        for run in bidi.visualRuns {
            let text = scalars[run.range].map(\.value)
            let shaped = font.shape(text, rightToLeft: run.rightToLeft, language: language)
            missing +=
                shaped.filter { $0.glyph == 0 && !scalars[run.range.lowerBound + $0.cluster].properties.isWhitespace }
                .count
            for group in multiGlyphClusters(shaped, characters: text.count) {
                let start = group.glyphs.lowerBound + glyphs.count
                let chars = Array(text[group.characters])
                clusters.append((start..<(start + group.glyphs.count), run.rightToLeft ? chars.reversed() : chars))
            }
            glyphs += shaped
        }
        self.glyphs = glyphs
        rightToLeft = bidi.rightToLeft
        self.missing = missing
        unitsPerEm = font.unitsPerEm
        width = Double(glyphs.reduce(0) { $0 + Int($1.xAdvance) }) * size / Double(font.unitsPerEm)
        pdfWidths = glyphs.map { font.width($0.glyph) }
    }

    /// The content-stream operators that draw the line at baseline `y`, from `left` or (right to left) flush with
    /// `right`: `TJ` arrays of two-byte glyph ids whose adjustments make each glyph advance by HarfBuzz's amount and
    /// sit at its horizontal offset, a text rise (`Ts`) for a glyph raised or lowered (a mark over or under a letter).
    func content(fontName: String, size: Double, y: Double, left: Double, right: Double) -> [UInt8] {
        let x = rightToLeft ? right - width : left
        var items: [String] = []
        func adjust(_ thousandths: Double) {
            if abs(thousandths) >= 0.005 { items.append(decimal(thousandths)) }
        }
        let scale = 1000 / Double(unitsPerEm)
        var operators: [String] = []
        func flush() {
            if !items.isEmpty { operators.append("[\(items.joined(separator: " "))] TJ") }
            items = []
        }
        for (i, (g, w)) in zip(glyphs, pdfWidths).enumerated() {
            let cluster = clusters.first { $0.glyphs.lowerBound == i }
            if let cluster {
                flush()
                let hex = cluster.text.compactMap(Unicode.Scalar.init).map { String($0) }.joined()
                operators.append("/Span << /ActualText <\(utf16Hex(hex))> >> BDC")
            }
            let offset = Double(g.xOffset) * scale
            adjust(-offset)
            if g.yOffset != 0 {  // raised or lowered (a mark): text rise, in points
                flush()
                operators.append("\(decimal(Double(g.yOffset) * size / Double(unitsPerEm))) Ts")
            }
            items.append("<" + zeroPadded(String(g.glyph, radix: 16, uppercase: true), 4) + ">")
            if g.yOffset != 0 {
                flush()
                operators.append("0 Ts")
            }
            adjust(offset + Double(w) - Double(g.xAdvance) * scale)
            if clusters.contains(where: { $0.glyphs.upperBound == i + 1 }) {
                flush()
                operators.append("EMC")
            }
        }
        flush()
        let head = "BT /\(fontName) \(decimal(size)) Tf \(decimal(x)) \(decimal(y)) Td"
        return Array((([head] + operators + ["ET"]).joined(separator: " ") + "\n").utf8)
    }
}

/// The clusters of a shaped run drawn with several glyphs for several characters, as ranges of its glyphs (visual
/// order) and of its `count` characters.
func multiGlyphClusters(_ glyphs: [ShapedGlyph], characters count: Int) -> [(
    glyphs: Range<Int>, characters: Range<Int>
)] {
    var found: [(glyphs: Range<Int>, characters: Range<Int>)] = []
    let starts = Set(glyphs.map(\.cluster)).sorted()
    var i = 0
    while i < glyphs.count {
        var j = i + 1
        while j < glyphs.count, glyphs[j].cluster == glyphs[i].cluster { j += 1 }
        let c = glyphs[i].cluster
        if j - i > 1, let n = starts.firstIndex(of: c) {
            let end = n + 1 < starts.count ? starts[n + 1] : nil
            found.append((i..<j, c..<(end ?? count)))
        }
        i = j
    }
    return found
}

/// `x` with at most two decimals and no exponent (`12`, `-3.5`, `0.25`).
func decimal(_ x: Double) -> String {
    let hundredths = Int((x * 100).rounded())
    let sign = hundredths < 0 ? "-" : ""
    let a = abs(hundredths)
    let fraction = a % 100
    if fraction == 0 { return "\(sign)\(a / 100)" }
    return "\(sign)\(a / 100)." + (fraction % 10 == 0 ? "\(fraction / 10)" : zeroPadded("\(fraction)", 2))
}

/// `scalars` (one logical line) wrapped to `width` points at spaces by measured widths, continuation lines
/// `continuationIndent` points narrower; a word wider than the line is cut where it must be.
func wrappedLines(
    _ scalars: [Unicode.Scalar], font: EmbeddedFont, size: Double, language: String, width: Double,
    continuationIndent: Double
) -> [LaidOutLine] {
    func laid(_ part: ArraySlice<Unicode.Scalar>) -> LaidOutLine {
        LaidOutLine(Array(part), font: font, size: size, language: language)
    }
    var lines: [LaidOutLine] = []
    var rest = scalars[...]
    var available = width
    while true {
        let whole = laid(rest)
        if whole.width <= available { return lines + [whole] }
        // The longest prefix ending before a space that fits; else the longest prefix that fits at all.
        let spaces = rest.indices.filter { rest[$0] == " " && $0 > rest.startIndex }
        var cut = spaces.last { laid(rest[..<$0]).width <= available }
        if cut == nil {
            var end = rest.startIndex + 1
            while end < rest.endIndex, laid(rest[..<(end + 1)]).width <= available { end += 1 }
            cut = end
        }
        let end = cut ?? rest.endIndex
        lines.append(laid(rest[..<end]))
        rest = rest[end...].drop { $0 == " " }
        if rest.isEmpty { return lines }
        available = width - continuationIndent
    }
}
