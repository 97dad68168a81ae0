"""Every accelerator and the rules that must survive real names and outliers.

The MTIA, XPU and HPU fixtures are small synthetic traces shaped as Kineto writes them (categories
from libkineto/include/ActivityType.h; XPU device work from the XPUPTI plugin, which writes kernels
as `kernel` and host calls as `xpu_runtime`; MTIA device work as `mtia_ccp_events`, joined to its
`mtia_runtime` calls by ac2g flow arrows only; HPU host calls as `hpu_op`). No real MTIA, XPU or HPU
trace is public: the shared set's MTIA capture is listed but absent.
"""

from __future__ import annotations

import json
import re

import pytest
from conftest import SAMPLES, X, write_trace

from tui.cli import main
from tui.model.analyses.kernel_roles import role
from tui.model.analyses.results import Results
from tui.model.load import load_trace


def _flow(fid: int, ph: str, ts: float, pid, tid) -> dict:
    return {"ph": ph, "id": fid, "pid": pid, "tid": tid, "ts": ts, "cat": "ac2g", "name": "ac2g", "bp": "e"}


def mtia_trace(path, steps: int = 3):
    """A CPU thread launching on-device work through the MTIA runtime; only flows join call and work."""
    events = [{"ph": "M", "name": "process_name", "pid": 7, "tid": 0, "args": {"name": "MTIA 0"}}]
    for k in range(steps):
        t = 1000 * k
        events += [
            X(f"ProfilerStep#{k}", t, 900, cat="user_annotation", pid=1, tid=1),
            X("aten::mm", t + 10, 300, pid=1, tid=1),
            X("mtiaRunFunction", t + 20, 40, cat="mtia_runtime", pid=1, tid=1),
            X("matmul_kernel_128x128", t + 100, 700, cat="mtia_ccp_events", pid=7, tid=3),
            _flow(100 + k, "s", t + 20, 1, 1),
            _flow(100 + k, "f", t + 100, 7, 3),
        ]
    return write_trace(path, events, deviceProperties=[], distributedInfo={"backend": "mtia:hccl,cpu:gloo"})


def xpu_trace(path):
    """Intel XPU: urEnqueueKernelLaunch on the host (xpu_runtime), kernels on the device, linked by correlation."""
    events = [{"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "XPU 0"}}]
    for k in range(4):
        t = 500 * k
        events += [
            X("aten::add", t, 60, pid=9, tid=9, External_id=k + 1),
            X(
                "urEnqueueKernelLaunch",
                t + 5,
                30,
                cat="xpu_runtime",
                pid=9,
                tid=9,
                correlation=50 + k,
                External_id=k + 1,
            ),
            X(
                "at::native::xpu::VectorizedElementwiseKernel",
                t + 40,
                400,
                cat="kernel",
                pid=0,
                tid=1,
                correlation=50 + k,
                External_id=k + 1,
            ),
        ]
    props = [
        {"id": 0, "name": "Intel(R) Data Center GPU Max 1550", "vendor": "Intel(R) Corporation", "maxComputeUnits": 448}
    ]
    return write_trace(path, events, deviceProperties=props)


def hpu_trace(path):
    """Habana HPU: the public Kineto writes only host-side hpu_op runtime events (the device side is Habana's)."""
    events = [X("aten::linear", 0, 100, pid=3, tid=3), X("hpu_launch_graph", 10, 50, cat="hpu_op", pid=3, tid=3)]
    return write_trace(path, events)


def test_mtia_device_work_counts_as_gpu_busy_kernels_and_launches(tmp_path):
    a = Results(load_trace(mtia_trace(tmp_path / "mtia.json"), use_cache=False))
    s = a.summary
    assert not s.cpu_only and s.kernels == 3 and s.gpu_busy_us == pytest.approx(2100)
    assert s.launches == 3  # mtiaRunFunction is no "Launch" by name: it counts because work is linked to it
    assert [r.name for r in a.kernels] == ["matmul_kernel_128x128"] and a.kernels[0].latency_median_us == 80
    # 72% busy, but each step's CPU span (900 us) outlasts its kernel (700 us): the path is the CPU's
    assert s.verdict == "overhead-bound" and s.gpu_busy_us == pytest.approx(2100)
    lanes = {t.name for t in a.trace.tracks if t.kind == "gpu"}
    assert lanes == {"MTIA 7 stream 3"}
    x = a.trace.x
    calls = a.links.launcher[x.cat == 4]
    assert [a.trace.name_of(int(c)) for c in calls] == ["mtiaRunFunction"] * 3  # each kernel to its runtime call
    assert (x.ts[calls] // 1000 - x.ts[calls][0] // 1000).tolist() == [0, 1000, 2000]


def test_xpu_kernels_link_by_correlation(tmp_path):
    a = Results(load_trace(xpu_trace(tmp_path / "xpu.json"), use_cache=False))
    assert a.summary.kernels == 4 and a.summary.launches == 4 and not a.summary.cpu_only
    assert a.kernels[0].role == "elementwise" and a.kernels[0].latency_median_us == 35
    assert {t.name for t in a.trace.tracks if t.kind == "gpu"} == {"XPU 0 stream 1"}
    rows = {r.name: r for r in a.ops.rows}
    assert rows["aten::add"].device_total_us == pytest.approx(1600)  # kernels reached through the launch links


def test_hpu_host_calls_are_runtime_calls(tmp_path, capsys):
    a = Results(load_trace(hpu_trace(tmp_path / "hpu.json"), use_cache=False))
    runtime = [a.trace.name_of(i) for i in range(a.trace.n) if a.trace.x.cat[i] == 3]
    assert runtime == ["hpu_launch_graph"] and a.summary.cpu_only


# Real kernel names from public traces, profiler output and library sources, with the role expected.
KERNELS = {
    # FlashAttention 2 and 3, PyTorch's copy of FA2
    "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::half_t, "
    "Flash_kernel_traits<128, 128, 64, 4, cutlass::half_t> >, false, true, false, false, true, true, false, false>"
    "(Flash_fwd_params)": "attention",
    "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, "
    "cutlass::bfloat16_t>>(pytorch_flash::Flash_fwd_params)": "attention",
    "void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90"
    "<2, cute::tuple<cute::C<1>>>>>(flash::FlashAttnFwdSm90::Params)": "attention",
    "fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128PersistentContext": "attention",
    # FlashInfer: attention kernels, and kernels that only carry the name
    "void flashinfer::BatchPrefillWithPagedKVCacheKernel<flashinfer::KernelTraits<>>(flashinfer::Params)": "attention",
    "void flashinfer::BatchDecodeWithPagedKVCacheKernel<true, 2u, 4u, 8u>(flashinfer::Params)": "attention",
    "create_flashinfer_kv_indices_triton": "triton",
    "void flashinfer::norm::RMSNormKernel<8u, __nv_bfloat16>(__nv_bfloat16*, __nv_bfloat16*)": "normalization",
    # cuDNN SDPA and cuDNN convolution
    "cudnn_generated_fort_native_sdpa_sm90_knob_7_64x128x64_4x1x1_kernel0_0": "attention",
    "sm80_xmma_fprop_implicit_gemm_indexed_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x32": "convolution",
    "volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1": "convolution",
    # CUTLASS and cuBLAS GEMMs
    "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>(Params)": "GEMM",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas": "GEMM",
    "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT": "GEMM",
    "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn": "GEMM",
    "volta_sgemm_128x64_tn": "GEMM",
    # Triton, Inductor's and hand-written
    "triton_poi_fused_add_cos_sin_0": "triton pointwise",
    "triton_red_fused_add_mean_mul_pow_rsqrt_0": "triton reduction",
    "triton_per_fused__softmax_0": "triton reduction",
    "triton_tem_fused_mm_0": "triton template (GEMM/conv)",
    "triton__0d1d2d3d": "triton",
    "_fwd_kernel_flash_decode_stage1_triton": "triton",
    # NCCL and RCCL
    "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)": "collective",
    "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)": "collective",
    "void rcclGenericKernel<1, false>(ncclDevComm*, unsigned long, ncclWork*)": "collective",
    # rocBLAS / Tensile, hipBLASLt, Composable Kernel
    "Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0_APM1_ABV0_ACED0_AF0EM1": "GEMM",
    "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x256x64_MI16x16x1_SN_LDSB1": "GEMM",
    "void ck::kernel_gemm_xdl_cshuffle_v3<ck::GridwiseGemm_xdl_cshuffle_v3<>>(ck::Argument)": "GEMM",
    "void ck_tile::kentry<ck_tile::FmhaFwdKernel<ck_tile::BlockFmhaPipelineQRKSVS<>>>(ck_tile::Kargs)": "attention",
    # ATen
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>(int, float*)": "elementwise",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float>>>(Op)": "reduction",
    "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, true>(float*, float const*)": "softmax",
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float)": "normalization",
    "void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*)": "elementwise",
    "void at::native::(anonymous namespace)::indexSelectLargeIndex<float, long>(TensorInfo)": "index / gather",
}


@pytest.mark.parametrize("name", list(KERNELS))
def test_kernel_roles_of_real_names(name):
    assert role(name) == KERNELS[name]


def test_the_attention_finding_is_about_attention_kernels_only(tmp_path, capsys):
    names = ["create_flashinfer_kv_indices_triton", "void flashinfer::BatchDecodeWithPagedKVCacheKernel<>(P)"]
    events = []
    for k, name in enumerate(names):
        events += [
            X("cudaLaunchKernel", 100 * k, 5, cat="cuda_runtime", correlation=k + 1),
            X(name, 100 * k + 10, 50, cat="kernel", pid=0, tid=7, correlation=k + 1),
        ]
    path = write_trace(tmp_path / "fi.json", events)
    assert main(["explain", str(path), "--format", "json", "--no-cache"]) == 0
    found = {f["rule"]: f for f in json.loads(capsys.readouterr().out)["findings"]}
    assert found["kernel-attention"]["count"] == 1 and "BatchDecode" in found["kernel-attention"]["examples"][0]
    assert found["kernel-triton"]["count"] == 1 and found["kernel-triton"]["examples"] == names[:1]


def slow_launch_trace(path, slow_us: float = 3_060_000):
    """100 launches of 9 us around tiny kernels, but one launch took 3.06 s (a kernel's module loaded lazily)."""
    events = []
    t: float = 0
    for k in range(100):
        dur: float = slow_us if k == 3 else 9
        events += [
            X("cudaLaunchKernel", t, dur, cat="cuda_runtime", correlation=k + 1),
            X(
                "void at::native::vectorized_elementwise_kernel<4>(int)",
                t + dur + 2,
                20,
                cat="kernel",
                pid=0,
                tid=7,
                correlation=k + 1,
            ),
        ]
        t += dur + 30
    return write_trace(path, events)


def test_one_slow_launch_does_not_skew_the_verdict_and_is_named(tmp_path, capsys):
    path = slow_launch_trace(tmp_path / "slow.json")
    s = Results(load_trace(path, use_cache=False)).summary
    assert s.median_launch_us == 9 and len(s.launch_outliers) == 1
    assert s.launch_outliers[0].dur_us == 3_060_000 and s.cpu_launch_typical_us == 99 * 9
    assert main(["summary", str(path), "--no-cache"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # the summary wraps its long lines (at 100 off a terminal)
    assert "median 9.000us (one cudaLaunchKernel took 3.06 s)" in out
    assert "averaging 31" not in out
    assert main(["explain", str(path), "--format", "json", "--no-cache"]) == 0
    found = {f["rule"]: f for f in json.loads(capsys.readouterr().out)["findings"]}
    note = found["slow-launch"]["note"]
    assert "took 3.06 s" in note and "median launch call (9.0 us)" in note and "CUDA_MODULE_LOADING=EAGER" in note
    assert "31,136" not in json.dumps(found)


def test_the_launch_average_says_the_outlier_it_leaves_out_and_counts_only_launch_calls(capsys):
    """The MI250 capture: 16 launches, of which 2 are blocking copies (waits, not launch time) and 1 a 6.5 ms
    hipLaunchKernel. The average call is the other 13 calls' time over 13 (read here with json alone), and the
    line that gives it says the outlier is left out."""
    from conftest import raw_events

    path = SAMPLES / "mi250-rocm-train.json.gz"
    launches = [
        e["dur"]
        for e in raw_events(path)
        if e.get("ph") == "X" and e.get("cat") == "cuda_runtime" and re.match(r"^hip\w*LaunchKernel$", e["name"])
    ]
    kept = [d for d in launches if d < 1000]
    assert (len(launches), len(kept)) == (14, 13)
    s = Results(load_trace(path, use_cache=False)).summary
    assert s.typical_launch_us == pytest.approx(sum(kept) / len(kept))  # 7.34 us, not over 15 calls (6.36)
    assert main(["summary", str(path), "--no-cache"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "(the call itself 7.3 us on average, leaving out the one hipLaunchKernel that took 6.5 ms)" in out


def test_overhead_reading_names_launches_only_when_they_cost_more_than_the_gpu_work(tmp_path):
    from tui.model.analyses.explain.readings import overhead_reading

    # launch-bound: 9 us launches buying 2 us kernels, back to back: the call is most of the CPU work per kernel
    events = []
    for k in range(50):
        events += [
            X("aten::add", 12 * k, 12),
            X("cudaLaunchKernel", 12 * k + 1, 9, cat="cuda_runtime", correlation=k + 1),
            X("k", 12 * k + 11, 2, cat="kernel", pid=0, tid=7, correlation=k + 1),
        ]
    s = Results(load_trace(write_trace(tmp_path / "l.json", events), use_cache=False)).summary
    assert s.verdict == "overhead-bound" and "Launching is the cost" in overhead_reading(s)
    # the same launches with 28 us of CPU work between ops: that work, not the call, is the cost
    events = []
    for k in range(50):
        events += [
            X("aten::add", 40 * k, 12),
            X("cudaLaunchKernel", 40 * k + 1, 9, cat="cuda_runtime", correlation=k + 1),
            X("k", 40 * k + 12, 2, cat="kernel", pid=0, tid=7, correlation=k + 1),
            X("aten::copy_", 40 * k + 13, 26),
        ]
    s = Results(load_trace(write_trace(tmp_path / "l2.json", events), use_cache=False)).summary
    assert s.verdict == "overhead-bound" and "The CPU work around each launch" in overhead_reading(s)
    # CPU-bound elsewhere: cheap launches, long CPU work between kernels
    events = []
    for k in range(20):
        events += [
            X("aten::nonzero", 1000 * k, 900),
            X("cudaLaunchKernel", 1000 * k + 900, 5, cat="cuda_runtime", correlation=k + 1),
            X("k", 1000 * k + 910, 50, cat="kernel", pid=0, tid=7, correlation=k + 1),
        ]
    s = Results(load_trace(write_trace(tmp_path / "c.json", events), use_cache=False)).summary
    reading = overhead_reading(s)
    assert s.verdict == "overhead-bound" and "The launch calls are cheap" in reading
    assert "aten::nonzero" in reading and s.cpu_while_idle[0][0] == "aten::nonzero"


def test_the_gpu_idle_finding_says_what_its_evidence_is(capsys):
    assert main(["explain", str(SAMPLES / "h100-bert-small.json.gz"), "--format", "json", "--no-cache"]) == 0
    found = {f["rule"]: f for f in json.loads(capsys.readouterr().out)["findings"]}
    gaps = found["overhead-gaps"]
    assert "Evidence: 60 gaps of more than 10 us between kernels add up to" in gaps["note"]
    assert gaps["count"] == 60 and len(gaps["examples"]) <= 3  # every gap counts; the 50 longest are marked
