/// RMS normalization as ggml computes it: the mean of squares summed in double, `scale = 1/√(mean + ε)` in float,
/// then `out[i] = (x[i] · scale) · weight[i]` (no weight multiply when `weight` is nil). `out` may be `x`.
@inline(__always)
@inlinable
public func rmsNorm(
    _ x: UnsafePointer<Float>, weight: UnsafePointer<Float>?, out: UnsafeMutablePointer<Float>, count: Int,
    epsilon: Float
) {
    var sum: Double = 0
    for i in 0..<count { sum += Double(x[i] * x[i]) }
    let mean = Float(sum / Double(count))
    let scale = 1 / (mean + epsilon).squareRoot()
    if let weight {
        for i in 0..<count { out[i] = (x[i] * scale) * weight[i] }
    } else {
        for i in 0..<count { out[i] = x[i] * scale }
    }
}

/// Layer normalization as ggml_norm computes it on an AVX2 CPU, then the weight and the bias as llama.cpp applies
/// them (separate multiply and add): the mean is the double sum of `x` rounded to float and divided; the variance
/// sums `(x − mean)²` eight at a time (each group reduced as `hsum_float_8`, the groups and a tail of single
/// values in double); `scale = 1/√(variance + ε)`; `out[i] = ((x[i] − mean) · scale) · weight[i] + bias[i]`.
/// `out` may be `x`.
@inline(__always)
@inlinable
public func layerNorm(
    _ x: UnsafePointer<Float>, weight: UnsafePointer<Float>?, bias: UnsafePointer<Float>?,
    out: UnsafeMutablePointer<Float>, count: Int, epsilon: Float
) {
    var total: Double = 0
    for i in 0..<count { total += Double(x[i]) }
    let mean = Float(total) / Float(count)
    var sum: Double = 0
    var i = 0
    while i + 8 <= count {
        let v = UnsafeRawPointer(x + i).loadUnaligned(as: SIMD8<Float>.self) - mean
        UnsafeMutableRawPointer(out + i).storeBytes(of: v, as: SIMD8<Float>.self)
        sum += Double(llamaHorizontalSum(v * v))
        i += 8
    }
    while i < count {
        let v = x[i] - mean
        out[i] = v
        sum += Double(v * v)
        i += 1
    }
    let variance = Float(sum / Double(count))
    let scale = 1 / (variance + epsilon).squareRoot()
    for i in 0..<count { out[i] *= scale }
    if let weight {
        for i in 0..<count { out[i] *= weight[i] }
    }
    if let bias {
        for i in 0..<count { out[i] += bias[i] }
    }
}
