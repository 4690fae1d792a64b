"""Attention Explorer's Streamlit UI. Holds no attention math: only layout and formatting."""
