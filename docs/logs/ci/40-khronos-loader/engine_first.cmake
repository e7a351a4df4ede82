find_package(OpenCLHeaders CONFIG REQUIRED)
find_package(OpenCLICDLoader CONFIG REQUIRED)
message(STATUS "engine: OpenCL::OpenCL from ${OpenCLICDLoader_DIR}, OpenCL::Headers from ${OpenCLHeaders_DIR}")
