import Foundation

/// `sanad bench -o svg`: every result as a bar (t/s), grouped by test, one colour per engine (and per thread or
/// batch setting when the run varied them), the model, CPU and build named. Hand-written SVG, no dependencies.
struct BenchChart {
    let results: [(run: BenchRun, test: BenchCommand.TestSpec, ts: Double?)]
    let build: String

    static let palette = ["#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"]

    /// A bar's series: the engine, with the settings that differ between the run's results.
    func series(_ run: BenchRun) -> String {
        var label = run.backend
        if Set(results.map(\.run.threads)).count > 1 { label += " t\(run.threads)" }
        if Set(results.map(\.run.batch)).count > 1 { label += " b\(run.batch)" }
        if Set(results.map(\.run.ubatch)).count > 1 { label += " ub\(run.ubatch)" }
        return label
    }

    /// A group: the test, with the model when the run had several.
    func group(_ run: BenchRun, _ test: BenchCommand.TestSpec) -> String {
        Set(results.map(\.run.model.filename)).count > 1 ? "\(run.model.type) \(test.name)" : test.name
    }

    var svg: String {
        let drawn = results.compactMap { r in r.ts.map { (group: group(r.run, r.test), series: series(r.run), ts: $0) }
        }
        let groups = ordered(drawn.map(\.group))
        let allSeries = ordered(drawn.map(\.series))
        let missing = ordered(results.filter { $0.ts == nil }.map { "\(series($0.run)) \(group($0.run, $0.test))" })
        let top = niceTop(max(1, drawn.map(\.ts).max() ?? 1) * 1.12)
        let left = 64.0
        let plotHeight = 260.0
        let minimumGroupWidth = max(110, 36 * Double(allSeries.count) + 30)
        let models = ordered(results.map(\.run.model.filename)).joined(separator: ", ")
        let cpus = ordered(results.map(\.run.cpu)).joined(separator: ", ")
        let title = "sanad bench: \(models), tokens per second, CPU: \(cpus)"
        let legendWidth = allSeries.reduce(20) { $0 + 40 + 7 * Double($1.count) }
        // Wide enough for the bars, the title (about 9 px a character, bold at 14 px) and the legend.
        let width = max(
            left + 20 + minimumGroupWidth * Double(max(groups.count, 1)), 9 * Double(title.count) + 40, legendWidth)
        let groupWidth = (width - left - 20) / Double(max(groups.count, 1))
        let height = 34 + plotHeight + 90
        func y(_ v: Double) -> Double { 40 + plotHeight * (1 - v / top) }
        var out = [
            "<rect width=\"\(f(width))\" height=\"\(f(height))\" fill=\"#fff\"/>",
            "<text x=\"\(f(width / 2))\" y=\"22\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\">"
                + escape(title) + "</text>",
        ]
        for i in 0...4 {
            let v = top * Double(i) / 4
            out.append(
                "<line x1=\"\(f(left))\" x2=\"\(f(width - 20))\" y1=\"\(f(y(v)))\" y2=\"\(f(y(v)))\" stroke=\"#ddd\"/>")
            out.append(
                "<text x=\"\(f(left - 6))\" y=\"\(f(y(v) + 4))\" text-anchor=\"end\" font-size=\"11\">\(label(v))</text>"
            )
        }
        let bar = min(32, (groupWidth - 30) / Double(max(allSeries.count, 1)))
        for (g, name) in groups.enumerated() {
            let x0 = left + Double(g) * groupWidth + (groupWidth - bar * Double(allSeries.count)) / 2
            for (s, seriesName) in allSeries.enumerated() {
                guard let value = drawn.first(where: { $0.group == name && $0.series == seriesName })?.ts else {
                    continue
                }
                let x = x0 + Double(s) * bar
                out.append(
                    "<rect x=\"\(f(x))\" y=\"\(f(y(value)))\" width=\"\(f(bar - 3))\" height=\"\(f(y(0) - y(value)))\" "
                        + "fill=\"\(color(s))\"><title>\(escape("\(seriesName) \(name): \(label(value)) t/s"))</title></rect>"
                )
                out.append(
                    "<text x=\"\(f(x + (bar - 3) / 2))\" y=\"\(f(y(value) - 3))\" text-anchor=\"middle\" "
                        + "font-size=\"10\">\(label(value))</text>")
            }
            out.append(
                "<text x=\"\(f(left + (Double(g) + 0.5) * groupWidth))\" y=\"\(f(y(0) + 16))\" text-anchor=\"middle\" "
                    + "font-size=\"11\">\(escape(name))</text>")
        }
        var legendX = 20.0
        for (s, name) in allSeries.enumerated() {
            out.append(
                "<rect x=\"\(f(legendX))\" y=\"\(f(height - 46))\" width=\"12\" height=\"12\" fill=\"\(color(s))\"/>")
            out.append(
                "<text x=\"\(f(legendX + 16))\" y=\"\(f(height - 36))\" font-size=\"12\">\(escape(name))</text>")
            legendX += 40 + 7 * Double(name.count)
        }
        let note = (missing.isEmpty ? "" : "unavailable: \(missing.joined(separator: ", ")); ") + "build: \(build)"
        out.append("<text x=\"20\" y=\"\(f(height - 14))\" font-size=\"10\" fill=\"#666\">\(escape(note))</text>")
        return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(f(width))\" height=\"\(f(height))\" "
            + "viewBox=\"0 0 \(f(width)) \(f(height))\" font-family=\"sans-serif\" font-size=\"12\">\n"
            + out.joined(separator: "\n") + "\n</svg>\n"
    }

    private func color(_ index: Int) -> String { Self.palette[index % Self.palette.count] }

    /// 1, 2 or 5 times a power of ten at or above `value`.
    private func niceTop(_ value: Double) -> Double {
        let magnitude = pow(10, floor(log10(value)))
        return [1.0, 2, 5, 10].map { $0 * magnitude }.first { $0 >= value } ?? value
    }

    private func label(_ value: Double) -> String {
        value >= 100 ? String(format: "%.0f", value) : String(format: "%.1f", value)
    }

    private func f(_ value: Double) -> String { String(format: "%.1f", value) }

    private func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}

/// `values` without repeats, in first-seen order.
private func ordered(_ values: [String]) -> [String] {
    var seen = Set<String>()
    return values.filter { seen.insert($0).inserted }
}
