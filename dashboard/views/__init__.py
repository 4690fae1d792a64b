"""One page per module; each exposes render(), which st.navigation runs."""
