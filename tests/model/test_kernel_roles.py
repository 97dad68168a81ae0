"""One kernel classifier: each kernel's role, math unit and dtype from its name, real names from real traces, and
every user of it (the kernels table, explain, the roofline, the critical path) agreeing by construction."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SAMPLES, SHARED

from tui.model import load_trace
from tui.model.analyses.critical.classes import Bound, device_bound
from tui.model.analyses.kernel_roles import MATRIX, VECTOR, classify, runs_on
from tui.model.analyses.results import Results
from tui.model.cats import Cat


def h200(name: str):
    """A capture of the H200 series: the copy shipped in sample_traces/cuda-h200, else ../shared's; a skip, saying
    why, in a checkout that has neither."""
    for where in (SAMPLES / "cuda-h200", SHARED / "cuda-h200-series"):
        if (where / name).is_file():
            return where / name
    pytest.skip(f"{name} of the H200 series is in neither sample_traces/cuda-h200 nor {SHARED}")


# (name as a trace writes it, role, unit, dtype): NVIDIA cuBLAS, cuBLASLt, CUTLASS, cuDNN, FlashAttention, TensorRT-LLM
NVIDIA = [
    # the contradiction: cuBLAS's xmma family, but an FFMA kernel (H200, attn_sdpa_math)
    (
        "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas",
        "GEMM",
        VECTOR,
        "fp32",
    ),
    (
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
        "GEMM",
        MATRIX,
        "bf16",
    ),
    ("ampere_sgemm_128x64_nn", "GEMM", VECTOR, "fp32"),
    ("volta_sgemm_128x32_nt", "GEMM", VECTOR, "fp32"),
    (
        "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>(cutlass_80_simt_sgemm_128x32_8x5_nn_align1::Params)",
        "GEMM",
        VECTOR,
        "fp32",
    ),
    (
        "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x128_32x3_nn_align1>(cutlass_80_tensorop_s1688gemm_256x128_32x3_nn_align1::Params)",
        "GEMM",
        MATRIX,
        "tf32",
    ),
    (
        "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_256x128_64x3_tn_align2>(cutlass_80_tensorop_bf16_s16816gemm_bf16_256x128_64x3_tn_align2::Params)",
        "GEMM",
        MATRIX,
        "bf16",
    ),
    (
        "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8>(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8::Params)",
        "GEMM",
        MATRIX,
        "bf16",
    ),
    ("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", "GEMM", MATRIX, "bf16"),  # cuBLASLt on Hopper (H200 series)
    ("nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT", "GEMM", MATRIX, "bf16"),  # B200
    ("nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_NTN", "GEMM", MATRIX, "fp16"),
    (
        "void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 2, 2, false, false, cublasGemvParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float> >, float>(cublasGemvParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float> >, float, float)",
        "GEMM",
        VECTOR,
        "fp32",
    ),
    ("volta_h884gemm_64x64_ldg8_nn", "GEMM", MATRIX, "fp16"),
    ("turing_fp16_s1688gemm_fp16_128x128_ldg8_f2f_nn", "GEMM", MATRIX, "fp16"),
    (
        "sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x128x32_stage5_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer",
        "convolution",
        MATRIX,
        "tf32",
    ),
    ("volta_scudnn_128x64_relu_interior_nn_v1", "convolution", VECTOR, "fp32"),
    (
        "void implicit_convolve_sgemm<float, float, 1024, 5, 5, 3, 3, 3, 1, false, true, true>(int, int, int, float const*, int, float*, float const*, kernel_conv_params, unsigned long long, int, float, float, int, float const*, float const*, bool, int, int)",
        "convolution",
        VECTOR,
        "fp32",
    ),
    (
        "void cutlass_cudnn_infer::Kernel<cutlass_tensorop_s1688fprop_optimized_tf32_128x128_16x4_nhwc_align4>(cutlass_tensorop_s1688fprop_optimized_tf32_128x128_16x4_nhwc_align4::Params)",
        "convolution",
        MATRIX,
        "tf32",
    ),
    (
        "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_4x1x1_cga1x1x1_kernel0_0",
        "attention",
        MATRIX,
        "fp16",
    ),
    (
        "fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)",
        "attention",
        MATRIX,
        "bf16",
    ),
    (
        "fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128PersistentContext",
        "attention",
        MATRIX,
        "fp8",
    ),
    (
        "bmm_Bfloat16_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16dp256b_rM_TN_transOut_schedP2x1x2x3_biasM_bN_tmaOpt_clmp_dynBatch_sm100f",
        "GEMM",
        MATRIX,
        "fp8",
    ),
    ("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "collective", "", ""),
    (
        "void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned long, unsigned int**, unsigned long, unsigned long)",
        "collective",
        "",
        "",
    ),
]
# AMD: Tensile (rocBLAS, hipBLASLt) with and without an MFMA instruction, composable_kernel, MIOpen
AMD = [
    (
        "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x192x64_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1",
        "GEMM",
        MATRIX,
        "bf16",
    ),
    (
        "Cijk_Ailk_Bjlk_SB_Bias_AS_SAV_UserArgs_MT64x16x16_MI16x16x1_SN_LDSB0_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_EPS0",
        "GEMM",
        MATRIX,
        "fp32",
    ),
    ("Cijk_Ailk_Bljk_SB_MT64x64x8_SN_1LDSB0_APM1_ABV0_ACED0_AF0EM1_AF1EM1_AMAS3_ASE_ASGT_ASLT", "GEMM", VECTOR, "fp32"),
    ("Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB1_APM1_ABV0", "GEMM", MATRIX, "fp16"),
    (
        "_ZN2ck16tensor_operation6device37kernel_batched_gemm_xdlops_bwd_weightINS_47GridwiseGemm_bk0mk1_bk0nk1_mn_xdlops_bwd_weightILi64EttftLNS_25InMemoryDataOperationEnumE1E",
        "GEMM",
        MATRIX,
        "",
    ),
    (
        "igemm_fwd_gtcx3_nhwc_bf16_bx0_ex1_bt128x128x32_wt32x32x8_ws1x1_wr2x2_ta1x8x2x1_1x4x1x64_tb1x8x2x1_1x4x1x64",
        "convolution",
        MATRIX,
        "bf16",
    ),
    (
        "_ZN7ck_tile6kentryILi1ENS_12Rmsnorm2dFwdINS_27Rmsnorm2dFwdPipelineOnePassINS_27Rmsnorm2dFwdPipelineProblemIDF16b",
        "normalization",
        "",
        "",
    ),
    ("SubTensorOpWithScalar1d", "elementwise", "", ""),
]
# Triton: Inductor's families, a template GEMM, hand-written Triton kernels
TRITON = [
    ("triton_poi_fused__unsafe_view_gelu_mul_0", "triton pointwise", "", ""),
    ("triton_red_fused_add_mean_mul_pow_rsqrt_0", "triton reduction", "", ""),
    ("triton_per_fused__softmax_0", "triton reduction", "", ""),
    ("triton_tem_fused_addmm_relu_0", "triton template (GEMM/conv)", MATRIX, ""),
    ("triton__0d1d2d3d", "triton", "", ""),
    ("create_flashinfer_kv_indices_triton", "triton", "", ""),
    ("_matmul_ogs_NNT_bf16xbf16xmxfp4_128x128x128x1", "GEMM", MATRIX, "bf16"),
]
# names that once went to the wrong role: a word in a namespace or a template argument is not a role
NOT_FOOLED = [
    (
        "void fbgemm_gpu::permute_2D_data_kernel<false, int, int, decltype(nullptr)>(int, int, int, int const*, decltype(nullptr) const*, int const*, int const*, int const*, int*, decltype(nullptr)*)",
        "copy / layout",
    ),
    (
        "void split_embedding_codegen_forward_unweighted_kernel<float, float, float, false, long, 1ul, 16ul>(at::GenericPackedTensorAccessor<float, 1ul, at::RestrictPtrTraits, long>, fbgemm_gpu::FixedDivisor)",
        "index / gather",
    ),
    (
        "void at::native::vectorized_elementwise_kernel<4, fbgemm_gpu::_float_to_hfp8_gpu(at::Tensor const&, long, long, double)::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, fbgemm_gpu::_float_to_hfp8_gpu(at::Tensor const&, long, long, double)::{lambda(float)#1}, at::detail::Array<char*, 2>)",
        "elementwise",
    ),
    (
        "std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, void>::type vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, long, c10::BFloat16*, c10::BFloat16 const*, float, int, int)",
        "normalization",
    ),
    (
        "void moe::dev::finalize::finalizeKernelVecLoad<moe::dev::finalize::KernelParams<cutlass::bfloat16_t, cutlass::bfloat16_t, 4, true> >(moe::dev::finalize::KernelParams<cutlass::bfloat16_t, cutlass::bfloat16_t, 4, true>)",
        "other",
    ),
    (
        "void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, float const*, int, int, int, int, int, int, int, int, int, int, int, int, int, int, float*, long*)",
        "pooling",
    ),
    ("kernel_unified_attention_2d", "attention"),
]


@pytest.mark.parametrize(("name", "role", "unit", "dtype"), NVIDIA + AMD + TRITON)
def test_role_unit_and_dtype_from_real_names(name, role, unit, dtype):
    k = classify(name)
    assert (k.role, k.unit, k.dtype) == (role, unit, dtype)


# A dtype a template argument names comes before a word of the name: cuDNN's precomputed_convolve_sgemm is the
# CUDA-core implicit GEMM, and with __nv_bfloat16 data it is a bf16 kernel (the issue's), not an fp32 one. The
# parameter list's float alpha and beta say nothing; a `T const` operand is the data (gemmk1's float is its compute type).
TEMPLATE_DTYPES = [
    (
        "void precomputed_convolve_sgemm<__nv_bfloat16, 1024, 5, 5, 4, 3, 3, 1, false>(int, int, int, __nv_bfloat16 "
        "const*, int, __nv_bfloat16*, __nv_bfloat16 const*, kernel_conv_params, unsigned long long, int, float, float, "
        "int, __nv_bfloat16 const*, __nv_bfloat16 const*, bool, int, int)",
        "convolution",
        VECTOR,
        "bf16",
    ),
    (
        "void implicit_convolve_sgemm<c10::Half, c10::Half, 128, 5, 5, 3, 3, 3, 1, false>(int, float)",
        "convolution",
        VECTOR,
        "fp16",
    ),
    (
        "void gemv2T_kernel_val<int, int, __half, __half, __half, float, 128, 16, 4, 4, false, false, cublasGemvParams<"
        "cublasGemvTensorStridedBatched<__half const>, cublasGemvTensorStridedBatched<__half> > >(float, float)",
        "GEMM",
        VECTOR,
        "fp16",
    ),
    (
        "void gemmk1_kernel<int, float, 256, 5, false, false, false, false, cublasGemvTensorStridedBatched<"
        "__nv_bfloat16 const>, cublasGemvTensorStridedBatched<__nv_bfloat16> >(float)",
        "GEMM",
        VECTOR,
        "bf16",
    ),
    # real names whose template arguments agree with their words
    (
        "void wgrad_alg0_engine<float, 128, 5, 5, 3, 3, 3, false, 512>(int, int, int, float const*, int, float*, float "
        "const*, kernel_grad_params, unsigned long long, int, float, int, int, int, int)",
        "convolution",
        VECTOR,
        "fp32",
    ),
    (
        "fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t, "
        "cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)",
        "attention",
        MATRIX,
        "bf16",
    ),
    # no type among the arguments: the name's words decide
    (
        "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_16x4_nn_align4>(cutlass_80_tensorop_s1688gemm_"
        "128x128_16x4_nn_align4::Params)",
        "GEMM",
        MATRIX,
        "tf32",
    ),
]


@pytest.mark.parametrize(("name", "role", "unit", "dtype"), TEMPLATE_DTYPES)
def test_a_template_argument_names_the_dtype_before_the_words(name, role, unit, dtype):
    k = classify(name)
    assert (k.role, k.unit, k.dtype) == (role, unit, dtype)


def test_a_bf16_gemm_on_the_cuda_cores_is_not_told_to_use_bf16():
    """kernel-fp32-gemm ("bf16/fp16 (torch.autocast) would use them") is for fp32 data only."""
    from tui.model.analyses.explain.rules import KERNEL_HINTS

    fp32_hint = dict(KERNEL_HINTS)["kernel-fp32-gemm"]
    assert not fp32_hint(classify(TEMPLATE_DTYPES[0][0]))
    assert fp32_hint(classify(TEMPLATE_DTYPES[4][0]))


@pytest.mark.parametrize(("name", "role"), NOT_FOOLED)
def test_a_namespace_or_template_argument_is_not_a_role(name, role):
    assert classify(name).role == role


def test_units_in_words_follow_the_vendor():
    assert runs_on("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", MATRIX, "bf16") == "tensor cores, bf16"
    assert runs_on("ampere_sgemm_128x64_nn", VECTOR, "fp32") == "CUDA cores, fp32"
    assert runs_on("Cijk_Ailk_Bljk_BBS_BH_MT32x32x64_MI16x16x16x1", MATRIX, "bf16") == "matrix cores, bf16"
    assert runs_on("elementwise", "", "") == ""


def test_the_kernels_table_shows_where_the_math_runs():
    a = Results(load_trace(h200("attn_sdpa_math.json.gz"), use_cache=False))
    ffma = [r for r in a.kernels if "ffma" in r.name]
    assert len(ffma) == 2 and all((r.role, r.unit, r.dtype) == ("GEMM", VECTOR, "fp32") for r in ffma)
    amd = Results(load_trace(SAMPLES / "mi250-rocm-train.json.gz", use_cache=False))
    copies = [r for r in amd.kernels if r.kind != "kernel"]
    assert copies and all(r.role == "data movement" and r.unit == "" for r in copies)
    mfma = [r for r in amd.kernels if r.name.startswith("Cijk_")]
    assert mfma and all((r.role, r.unit, r.dtype) == ("GEMM", MATRIX, "fp32") for r in mfma)


def test_ffma_gemm_is_never_both_tensor_core_and_off_the_tensor_cores():
    """The issue's contradiction: an sm80_xmma ... ffma kernel was 'tensor-core, the fast path' and, two findings
    later, an fp32 GEMM off the tensor cores. Both now read one classifier."""
    a = Results(load_trace(h200("attn_sdpa_math.json.gz"), use_cache=False))
    rules = {f.rule: f for f in a.findings}
    assert "kernel-tensor-core" not in rules
    assert {a.trace.name_of(e) for e in rules["kernel-fp32-gemm"].events} == {
        r.name for r in a.kernels if "ffma" in r.name
    }
    assert rules["roofline-fp32-gemm"].title == "fp32 GEMMs off the tensor cores"
    bmm = [x for x in a.roofline.rows if x.name == "aten::bmm"]
    assert bmm and all((x.kernel_unit, x.roof_unit, x.roof_dtype) == (VECTOR, VECTOR, "fp32") for x in bmm)


@pytest.mark.parametrize("trace", sorted(p.name for p in SAMPLES.glob("*.json.gz")))
def test_no_kernel_is_marked_tensor_core_and_fp32_off_the_tensor_cores(trace):
    a = Results(load_trace(SAMPLES / trace, use_cache=False))
    by_rule: dict[str, set[int]] = {}
    for f in a.findings:
        by_rule.setdefault(f.rule, set()).update(f.events)
    tensor = {a.trace.name_of(e) for e in by_rule.get("kernel-tensor-core", ())}
    fp32 = {a.trace.name_of(e) for e in by_rule.get("kernel-fp32-gemm", ())}
    assert not tensor & fp32
    # the kernels under an fp32 GEMM row measured against the tensor-core roof say so, and the other way round
    for row in a.roofline.rows:
        if row.family == "gemm" and row.roof_dtype == "tf32" and row.kernel_unit:
            assert row.kernel_unit == MATRIX
        if row.roof_unit == VECTOR and row.unit == MATRIX:
            assert row.kernel_unit == VECTOR


def test_the_critical_path_reads_the_same_roles():
    assert (
        device_bound("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", int(Cat.KERNEL))
        == Bound.GPU_COMMUNICATION
    )
    assert device_bound("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", int(Cat.KERNEL)) == Bound.GPU_COMPUTE
    assert device_bound("Memcpy HtoD (Pageable -> Device)", int(Cat.MEMCPY)) == Bound.GPU_MEMCPY


def test_rank_rows_count_the_collectives_the_classifier_names():
    a = Results(load_trace(SAMPLES / "a100-ddp-nccl.json.gz", use_cache=False))
    x = a.trace.x
    kernels = np.flatnonzero(x.cat == int(Cat.KERNEL))
    comm = [k for k in kernels.tolist() if classify(a.trace.name_of(k)).role == "collective"]
    assert comm and a.rank_row.comm_us > 0
    assert a.rank_row.comm_us <= x.dur[comm].sum() / 1000 + 1e-6
