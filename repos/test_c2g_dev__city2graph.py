"""city2graph — turns geospatial data (GeoPandas, OSM) into graphs for PyTorch Geometric.

Repository: https://github.com/c2g-dev/city2graph
Commit: db9fcb91062fb8eff653ab52e8c7b60a4cd266bc
Domain: geospatial graph construction for GNNs (GeoPandas/OSM to PyTorch Geometric)
Category: NA_no_single_gpu (tiers that apply: C0 C2 C5)

A library with no runnable entrypoint: C1, C3 and C4 are all repo_not_supported, so only C0, C2 and
C5 are scored. The one prepared asset is the repository's sample GeoJSON; nothing needs network.
"""

from pytest_reb import Asset, C2Variant, CompatVariant, Repo

repo = Repo(
    "c2g-dev/city2graph",
    commit="db9fcb91062fb8eff653ab52e8c7b60a4cd266bc",
    c2_compat=C2Variant(no_python="unknown", missing="runtime", not_executable="runtime",
        directory="runtime", timeout="timeout", crashed="unknown", failed="unknown",
        silent="unknown", garbage="invalid_json"),
    c5_compat=CompatVariant(strip_path=True, silent_python_ok=False, version_claim="text_null",
        version_strip=True, torch_claim="text_null", torch_strip=True, cuda_claim="truthy",
        gpu_count_coerce=True, gpu_observed_coerce=True),
    imports_total=40,  # the C0 denominator
    domain="geospatial graph construction for GNNs (GeoPandas/OSM to PyTorch Geometric)",
    assets=[
        Asset(
            "sample_geojson", "dataset", "repo",
            path="tests/data",
            files=["sample_buildings.geojson", "sample_segments.geojson"],
            dest="dataset/city2graph_sample_geojson",
            note=(
                "copied to {assets}/dataset/city2graph_sample_geojson; no model asset. "
                "Library-only repo: all three run stages self-skip (repo_not_supported) unless "
                "SCIMLOPSBENCH_CPU_COMMAND / SCIMLOPSBENCH_SINGLE_GPU_COMMAND / "
                "SCIMLOPSBENCH_MULTI_GPU_COMMAND supplies a command, and the CSV marks them "
                "unsupported anyway"
            ),
        ),
    ],
    cpu=None,  # C1 does not apply: repo_not_supported
    single_gpu=None,  # C3 does not apply: repo_not_supported
    multi_gpu=None,  # C4 does not apply: repo_not_supported
    skip={
        "cpu": "repo_not_supported",
        "single_gpu": "repo_not_supported",
        "multi_gpu": "repo_not_supported",
    },
)
