"""Pure Plotly figure builders: arrays in, go.Figure out. No Streamlit here, so they test alone."""

from dashboard.charts.heatmap import matrix_heatmap

__all__ = ["matrix_heatmap"]
